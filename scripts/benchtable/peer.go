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

// peerSizes are the task and history-cycle counts of the generated projects.
var peerSizes = []int{100, 1000, 10000}

// peerCalls are the tools compared, with their arguments.
var peerCalls = []struct {
	tool string
	args map[string]any
}{
	{"nx_task_list", map[string]any{}},
	{"nx_task_add", map[string]any{"title": "benchmark task", "context": "added by the side-by-side benchmark", "deps": []any{1}}},
	{"nx_history_search", map[string]any{"query": "AUTH"}},
	{"nx_context", map[string]any{}},
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
			sizeRows[i] = &row{figure: fmt.Sprintf("`%s`, %s tasks/cycles: nexus / peer", c.tool, thousands(float64(n))),
				target: 0.5, unit: "ratio",
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
				d, err := cl.call(c.tool, c.args)
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
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	task := func(id int, status string) map[string]any {
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
			"created_at": base.Add(time.Duration(id) * time.Minute).Format("2006-01-02T15:04:05.000Z"),
		}
		if id > 1 {
			t["deps"] = []int{id - 1}
		}
		return t
	}
	statuses := []string{"completed", "completed", "in_progress", "pending"}
	tasks := make([]any, n)
	for i := range tasks {
		tasks[i] = task(i+1, statuses[i%len(statuses)])
	}
	tf := map[string]any{"schema_version": "0.5", "goal": "Build the storage layer", "decisions": []string{"Use atomic renames", "Keep one file per record"}, "tasks": tasks}
	if err := writeJSON(filepath.Join(state, "tasks.json"), tf); err != nil {
		return err
	}
	cycles := make([]any, n)
	for i := range cycles {
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
			ct[j] = task(j+1, "completed")
		}
		cycles[i] = map[string]any{
			"schema_version": "0.5",
			"completed_at":   base.Add(time.Duration(i) * time.Hour).Format("2006-01-02T15:04:05.000Z"),
			"branch":         "main",
			"plan": map[string]any{"id": i + 1, "topic": topic, "issues": issues, "research_summary": "Read the existing code and the two designs.",
				"created_at": base.Add(time.Duration(i) * time.Hour).Format("2006-01-02T15:04:05.000Z")},
			"tasks": ct,
		}
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
