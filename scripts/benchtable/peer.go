package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The "peer" group runs the tools agents call most against `nexus mcp` and
// against the Node.js harness nexus replaces (claude-nexus 0.27.0's bundled
// MCP server), side by side: the same generated project copied twice, one
// stdio client, the two servers' calls alternating in one run (the order
// flips every round, so neither always runs on a warmer cache). Each row is
// the ratio of the medians, nexus / peer.
//
// The peer is optional: -peer FILE or NEXUS_PEER_MCP names its
// mcp-server.cjs (`make bench` passes ../shared/peers/...); it needs Node.js
// 20 or later. Without it the ratio column is n/a and the nexus medians are
// still measured and printed.
//
// Each call is measured twice. First as it follows the server's own last
// call (the server may keep what it read). Then "cold": before every call
// the benchmark, as another process would (a hook, a second session,
// another harness), rewrites tasks.json with one task's status changed or
// appends a cycle to history.json, in each server's project, untimed; the
// file gets new bytes and a new inode, so what a server kept of it no
// longer vouches for it.
//
// The files are written where the benchmark's work folder is (TMPDIR):
// on a disk, not tmpfs, where a durable write's fsyncs cost what they cost
// a user (the table says which file system it was).

// peerSizes are the task and history-cycle counts of the generated projects.
var peerSizes = []int{100, 1000, 10000}

// Another process's change before each cold call.
const (
	ownWrites       = ""
	tasksRewritten  = "tasks.json rewritten by another process"
	historyAppended = "history.json appended by another process"
)

// peerCall is one tool compared, with its arguments for a round, the
// change made before each call and the target ratio.
type peerCall struct {
	tool   string
	args   func(round int) map[string]any
	before string
	target float64
}

func fixed(m map[string]any) func(int) map[string]any { return func(int) map[string]any { return m } }

var (
	taskList   = fixed(map[string]any{})
	taskAdd    = fixed(map[string]any{"title": "benchmark task", "context": "added by the side-by-side benchmark", "deps": []any{1}})
	taskUpdate = func(round int) map[string]any {
		return map[string]any{"id": round%50 + 2, "status": []string{"in_progress", "completed", "pending"}[round%3]}
	}
	historySearch = fixed(map[string]any{"query": "AUTH"})
	contextCall   = fixed(map[string]any{})
)

// peerCalls are the calls compared, in the order they run at each size.
var peerCalls = []peerCall{
	{"nx_task_list", taskList, ownWrites, 0.5},
	{"nx_task_add", taskAdd, ownWrites, 0.5},
	{"nx_task_update", taskUpdate, ownWrites, 0.5},
	{"nx_history_search", historySearch, ownWrites, 0.5},
	{"nx_context", contextCall, ownWrites, 0.5},
	{"nx_task_list", taskList, tasksRewritten, 1},
	{"nx_task_add", taskAdd, tasksRewritten, 1},
	{"nx_task_update", taskUpdate, tasksRewritten, 1},
	{"nx_history_search", historySearch, historyAppended, 0.5},
	{"nx_context", contextCall, historyAppended, 0.5},
}

func (c peerCall) figure(n int) string {
	what := "tasks"
	if strings.Contains(c.tool, "history") || c.before == historyAppended {
		what = "cycles"
	}
	f := fmt.Sprintf("`%s`, %s %s", c.tool, thousands(float64(n)), what)
	if c.before != "" {
		f += ", " + c.before
	}
	return f + ": nexus / peer"
}

// peerRounds is how many alternating calls each figure takes at a size.
func peerRounds(n int) int {
	switch {
	case n <= 100:
		return 60
	case n <= 1000:
		return 25
	}
	return 9
}

// peerCheck says why the peer cannot run ("" = it can).
func peerCheck(path string) string {
	if path == "" {
		return "no peer given (-peer FILE or NEXUS_PEER_MCP)"
	}
	if _, err := os.Stat(path); err != nil {
		return "no peer at " + path
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "the peer needs Node.js 20 or later; node is not installed"
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if major < 20 {
		return "the peer needs Node.js 20 or later; node is " + strings.TrimSpace(string(out))
	}
	return ""
}

func measurePeer(e *env) []*row {
	peerWhy := peerCheck(e.peer)
	if peerWhy != "" {
		fmt.Fprintln(os.Stderr, "benchtable: peer column skipped:", peerWhy)
	}
	var rows []*row
	rss := &row{figure: "`nexus mcp` peak RSS after the 10,000-task calls", target: 64, unit: "MiB",
		command: "VmHWM of the `nexus mcp` process of the peer group", na: "n/a (size 10,000 not measured)"}
	for _, n := range peerSizes {
		sizeRows := make([]*row, len(peerCalls))
		for i, c := range peerCalls {
			sizeRows[i] = &row{figure: c.figure(n), target: c.target, unit: "ratio",
				command: fmt.Sprintf("benchtable -only peer: %d alternating stdio calls each", peerRounds(n))}
			rows = append(rows, sizeRows[i])
		}
		err := peerSize(e, n, peerWhy, sizeRows, func(kib int64) {
			if n == 10000 {
				rss.value, rss.na = float64(kib)/1024, ""
				rss.detail = fmt.Sprintf("%.1f MiB peak resident set of `nexus mcp` after every call of the 10,000 group", rss.value)
			}
		})
		if err != nil {
			for _, r := range sizeRows {
				if r.err == nil && r.detail == "" {
					r.err = err
				}
			}
			if n == 10000 {
				rss.err = err
			}
		}
	}
	return append(rows, rss)
}

// peerSize measures every call at one size.
func peerSize(e *env, n int, peerWhy string, rows []*row, peakRSS func(kib int64)) error {
	dir := filepath.Join(e.work, fmt.Sprintf("peer-%d", n))
	for _, side := range []string{"nexus", "peer"} {
		if err := peerProject(filepath.Join(dir, side), n); err != nil {
			return err
		}
	}
	nx, err := startMCP(exec.Command(e.bin, "mcp"), filepath.Join(dir, "nexus"), e.nexusEnv)
	if err != nil {
		return fmt.Errorf("nexus mcp: %w", err)
	}
	defer nx.close()
	var pr *mcpClient
	if peerWhy == "" {
		peerEnv := append(append([]string(nil), e.nexusEnv...), "NEXUS_RUNTIME_ROOT="+filepath.Join(dir, "peer", ".nexus"))
		if pr, err = startMCP(exec.Command("node", e.peer), filepath.Join(dir, "peer"), peerEnv); err != nil {
			return fmt.Errorf("peer: %w", err)
		}
		defer pr.close()
	}
	rounds := peerRounds(n)
	projects := map[*mcpClient]string{nx: filepath.Join(dir, "nexus"), pr: filepath.Join(dir, "peer")}
	for i, c := range peerCalls {
		var tn, tp []float64
		for round := -2; round < rounds; round++ { // two warm-up rounds
			order := []*mcpClient{nx, pr}
			if round%2 != 0 {
				order[0], order[1] = pr, nx
			}
			for _, cl := range order {
				if cl == nil {
					continue
				}
				if err := changeAsAnotherProcess(projects[cl], c.before, round+2); err != nil {
					return fmt.Errorf("%s at %d: %w", c.tool, n, err)
				}
				d, err := cl.call(c.tool, c.args(round+2))
				if err != nil {
					return fmt.Errorf("%s at %d: %w", c.tool, n, err)
				}
				if round < 0 {
					continue
				}
				if cl == nx {
					tn = append(tn, ms(d))
				} else {
					tp = append(tp, ms(d))
				}
			}
		}
		r := rows[i]
		mn := median(tn)
		if pr == nil {
			r.na = "n/a (no peer)"
			r.detail = fmt.Sprintf("nexus median %.2f ms over %d calls; peer skipped: %s", mn, len(tn), peerWhy)
			continue
		}
		mp := median(tp)
		r.value = mn / mp
		r.detail = fmt.Sprintf("nexus median %.2f ms, peer median %.2f ms, %d alternating calls each", mn, mp, len(tn))
	}
	if kib, err := vmHWM(nx.cmd.Process.Pid); err == nil {
		peakRSS(kib)
	}
	return nil
}

// vmHWM reads a process's peak resident set size (KiB) from /proc.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, errors.New("no VmHWM")
}

// changeAsAnotherProcess makes the change before a cold call in the
// project at dir: one task's status in tasks.json changed (a different
// task each round), or a cycle appended to history.json, as a harness
// that writes JSON.stringify(v, null, 2) does: the file read, changed,
// written to a new file renamed over it. The rest of the file keeps its
// bytes. The new file is fsynced before the rename: the other process
// pays for its own durability. Unsynced, its data would be written out
// by the next fsync on the disk (ext4 writes a file renamed over another
// before the rename commits), which is the measured server's when it is
// nexus and never the peer's, which does not fsync.
func changeAsAnotherProcess(dir, change string, round int) error {
	switch change {
	case tasksRewritten:
		p := filepath.Join(dir, ".nexus", "state", "tasks.json")
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		key := []byte(`"status": "`)
		n := bytes.Count(data, key)
		if n == 0 {
			return fmt.Errorf("%s: no task", p)
		}
		at := 0
		for range round*7%n + 1 {
			at += bytes.Index(data[at:], key) + len(key)
		}
		end := at + bytes.IndexByte(data[at:], '"')
		status := "completed"
		if string(data[at:end]) == status {
			status = "in_progress"
		}
		return replaceFile(p, slices.Concat(data[:at], []byte(status), data[end:]))
	case historyAppended:
		p := filepath.Join(dir, ".nexus", "history.json")
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		end := bytes.LastIndex(data, []byte("\n  ]"))
		if end < 0 {
			return fmt.Errorf("%s: no cycles array", p)
		}
		c, err := json.MarshalIndent(benchCycle(bytes.Count(data, []byte(`"completed_at"`))), "    ", "  ")
		if err != nil {
			return err
		}
		return replaceFile(p, slices.Concat(data[:end], []byte(",\n    "), c, data[end:]))
	}
	return nil
}

func replaceFile(p string, data []byte) error {
	tmp := p + ".other"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

var benchBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchTask is task id of the generated projects (about 700 bytes).
func benchTask(id int, status string) map[string]any {
	t := map[string]any{
		"id":         id,
		"title":      fmt.Sprintf("Implement part %d of the storage layer", id),
		"context":    fmt.Sprintf("Task %d: the storage layer needs its reader, its writer and tests; see the plan's issue %d for the decision taken and why.", id, id%7+1),
		"approach":   "Write the reader first, then the writer, each with table-driven tests.",
		"acceptance": "go test ./... passes and the new code is covered.",
		"status":     status,
		"deps":       []int{},
		"plan_issue": id%7 + 1,
		"owner":      "engineer",
		"created_at": benchBase.Add(time.Duration(id) * time.Minute).Format("2006-01-02T15:04:05.000Z"),
	}
	if id > 1 {
		t["deps"] = []int{id - 1}
	}
	return t
}

// benchCycle is cycle i of the generated history: one in ten mentions
// "auth", the history_search query.
func benchCycle(i int) map[string]any {
	topic := fmt.Sprintf("Cycle %d: storage work", i)
	if i%10 == 3 {
		topic = fmt.Sprintf("Cycle %d: auth tokens", i)
	}
	issues := []any{
		map[string]any{"id": 1, "title": "Which format", "status": "decided", "decision": "JSON, indented, one file"},
		map[string]any{"id": 2, "title": "Where the lock lives", "status": "decided", "decision": "A sidecar .lock file"},
		map[string]any{"id": 3, "title": "Retention", "status": "pending"},
	}
	ct := make([]any, 5)
	for j := range ct {
		ct[j] = benchTask(j+1, "completed")
	}
	return map[string]any{
		"schema_version": "0.5",
		"completed_at":   benchBase.Add(time.Duration(i) * time.Hour).Format("2006-01-02T15:04:05.000Z"),
		"branch":         "main",
		"plan": map[string]any{"id": i + 1, "topic": topic, "issues": issues, "research_summary": "Read the existing code and the two designs.",
			"created_at": benchBase.Add(time.Duration(i) * time.Hour).Format("2006-01-02T15:04:05.000Z")},
		"tasks": ct,
	}
}

// peerProject writes a git project with n tasks in .nexus/state/tasks.json
// and n completed cycles in .nexus/history.json, deterministic so both
// servers get identical files. One cycle in ten mentions "auth", the
// history_search query.
func peerProject(dir string, n int) error {
	state := filepath.Join(dir, ".nexus", "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".nexus", ".gitignore"), []byte("state/\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("git", "init", "-q", "-b", "main")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	statuses := []string{"completed", "completed", "in_progress", "pending"}
	tasks := make([]any, n)
	for i := range tasks {
		tasks[i] = benchTask(i+1, statuses[i%len(statuses)])
	}
	tf := map[string]any{"schema_version": "0.5", "goal": "Build the storage layer", "decisions": []string{"Use atomic renames", "Keep one file per record"}, "tasks": tasks}
	if err := writeJSON(filepath.Join(state, "tasks.json"), tf); err != nil {
		return err
	}
	cycles := make([]any, n)
	for i := range cycles {
		cycles[i] = benchCycle(i)
	}
	return writeJSON(filepath.Join(dir, ".nexus", "history.json"), map[string]any{"schema_version": "0.5", "cycles": cycles})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// mcpClient is a minimal MCP stdio client: one JSON-RPC request line out,
// lines in until the answer with its id.
type mcpClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startMCP(cmd *exec.Cmd, dir string, envv []string) (*mcpClient, error) {
	cmd.Dir = dir
	cmd.Env = envv
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &mcpClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "benchtable", "version": "0"}}); err != nil {
		c.close()
		return nil, err
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *mcpClient) request(method string, params any) ([]byte, error) {
	c.id++
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	want := []byte(`"id":` + strconv.Itoa(c.id))
	for {
		resp, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: no answer: %w", method, err)
		}
		if bytes.Contains(resp, want) {
			return resp, nil
		}
	}
}

// call runs one tools/call and returns its round-trip time; a tool error
// is an error.
func (c *mcpClient) call(tool string, args map[string]any) (time.Duration, error) {
	t0 := time.Now()
	resp, err := c.request("tools/call", map[string]any{"name": tool, "arguments": args})
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	var m struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		return 0, fmt.Errorf("%s: answer is not JSON: %w", tool, err)
	}
	if len(m.Error) > 0 || m.Result.IsError || len(m.Result.Content) == 0 || strings.HasPrefix(m.Result.Content[0].Text, `{"error"`) {
		return 0, fmt.Errorf("%s failed: %.300s", tool, resp)
	}
	return d, nil
}

func (c *mcpClient) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}
