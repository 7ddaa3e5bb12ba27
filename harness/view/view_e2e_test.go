//go:build e2e

package view_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// The end-to-end checks of `nexus view`: the real nexus and nexus-plugins
// binaries, a real MCP client (mcp-go over `nexus mcp` stdio) writing
// state, and Debian's Chromium driven through the DevTools protocol by
// chromedp.

var commands testenv.Commands

func TestMain(m *testing.M) {
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

// browserPath finds Debian's Chromium; without it the check fails (it
// never skips).
func browserPath(t *testing.T) string {
	t.Helper()
	for _, b := range []string{"chromium", "chromium-headless-shell", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: install Debian's chromium (scripts/e2e/setup.d/60-chromium.sh, which make e2e runs)")
	return ""
}

// project is a scratch project with its own Nauro home, configuration
// and cache folders, so nothing outside the test's folders is touched.
type project struct {
	t              *testing.T
	dir, home, tmp string
	nexus          string
	env            []string
}

func newProject(t *testing.T) *project {
	t.Helper()
	tmp := t.TempDir()
	p := &project{t: t, dir: filepath.Join(tmp, "proj"), home: filepath.Join(tmp, "nauro"), tmp: tmp}
	for _, d := range []string{p.dir, p.home, filepath.Join(tmp, "config"), filepath.Join(tmp, "cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = []string{"NAURO_HOME=" + p.home, "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache")}
	p.nexus = commands.Path(t, "./cmd/nexus")
	commands.Path(t, "./cmd/nexus-plugins")
	p.run("git", "init", "-q")
	return p
}

func (p *project) run(name string, args ...string) string {
	p.t.Helper()
	c := exec.Command(name, args...)
	c.Dir, c.Env = p.dir, append(os.Environ(), p.env...)
	out, err := c.CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func (p *project) write(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// mcpClient starts `nexus mcp` on the project over stdio.
func (p *project) mcpClient(ctx context.Context) *client.Client {
	p.t.Helper()
	tr := transport.NewStdioWithOptions(p.nexus, p.env, []string{"--project", p.dir, "mcp"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			c := exec.CommandContext(ctx, command, args...)
			c.Dir, c.Env = p.dir, append(os.Environ(), env...)
			return c, nil
		}))
	c := client.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		p.t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "view-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) map[string]any {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("%s: %s", name, text)
	}
	var out map[string]any
	json.Unmarshal([]byte(text), &out)
	return out
}

// viewProc is a running `nexus view`.
type viewProc struct {
	cmd  *exec.Cmd
	url  string // with the token
	base string
}

func (p *project) startView(t *testing.T) *viewProc {
	t.Helper()
	c := exec.Command(p.nexus, "view", "--addr", "127.0.0.1:0")
	c.Dir, c.Env = p.dir, append(os.Environ(), p.env...)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	v := &viewProc{cmd: c}
	t.Cleanup(func() {
		c.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("nexus view after SIGINT: %v", err)
			}
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			t.Error("nexus view did not stop within 10 s of SIGINT")
		}
	})
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for v.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("nexus view ended before printing its address")
			}
			if i := strings.Index(l, "http://"); i >= 0 {
				v.url = strings.TrimSpace(l[i:])
			}
		case <-deadline:
			t.Fatal("nexus view printed no address within 30 s")
		}
	}
	v.base = v.url[:strings.Index(v.url, "/?token=")]
	go func() {
		for range lines {
		}
	}()
	return v
}

// rss reads a process's resident set and its peak (kB → bytes).
func rss(t *testing.T, pid int) (now, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return now, peak
}

// browser starts headless Chromium with the flags that work on this
// machine (a closed network: no background connections) and a fresh
// profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browserPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 820),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one action that answers a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return get(t, ctx, js, chromedp.Evaluate[T](js))
}

// artifacts is where the screenshots go: .e2e/artifacts/view/, and also
// $NEXUS_VIEW_SHOTS (docs/view.md's pictures are made that way).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// The whole page (the graph scrolls inside its own box).
	png := get(t, ctx, "screenshot "+name, chromedp.Screenshot(chromedp.CSS("body")))
	dirs := []string{filepath.Join(testenv.ModuleRoot(t), ".e2e", "artifacts", "view")}
	if d := os.Getenv("NEXUS_VIEW_SHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func figures(t *testing.T, lines ...string) {
	report := strings.Join(lines, "\n") + "\n"
	t.Log("\n" + report)
	if path := os.Getenv("NEXUS_E2E_FIGURES"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(report)
	}
}

type fileState struct {
	data  string
	mtime time.Time
	mode  fs.FileMode
}

// snapshot records every file and folder under the roots: content,
// modification time and type.
func snapshot(t *testing.T, roots ...string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			st, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			s := fileState{mtime: st.ModTime(), mode: st.Mode().Type()}
			if st.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				s.data = string(b)
			}
			out[p] = s
			return nil
		})
	}
	return out
}

func diffSnap(a, b map[string]fileState) []string {
	var d []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			d = append(d, "removed "+k)
		case v.data != w.data:
			d = append(d, "changed "+k)
		case !v.mtime.Equal(w.mtime):
			d = append(d, "touched "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	slices.Sort(d)
	return d
}

const hostileTitle = `<img src=x onerror="window.__pwned=1">Escape me`

// TestE2EView seeds a project (plan, tasks over MCP, two hosts' trackers,
// memory, a decision store), then drives the page: every view shows the
// seeded state, the page's decision check answers what `nexus decision
// check` prints, using the page writes nothing, an nx_task_add over MCP
// appears in the graph without a reload (median of 20), and requests
// without the token or from a foreign Origin are refused.
func TestE2EView(t *testing.T) {
	p := newProject(t)
	p.run(p.nexus, "decision", "init", "demo")
	p.run(p.nexus, "decision", "propose", "--title", "Use SQLite for local state", "--rationale", "One file, no server, enough for one developer's machine.")
	p.run(p.nexus, "decision", "propose", "--operation", "supersede", "--affected", "decision-002", "--title", "Use PostgreSQL for shared state",
		"--rationale", "Several hosts write at once; PostgreSQL gives row locks and transactions.")
	ctx := context.Background()
	mc := p.mcpClient(ctx)
	// A finished cycle for the history.
	call(t, mc, "nx_plan_start", map[string]any{"topic": "Pick a state store", "issues": []any{"SQLite or PostgreSQL?"}, "research_summary": "both"})
	call(t, mc, "nx_plan_decide", map[string]any{"issue_id": 1, "decision": "PostgreSQL, several hosts write at once"})
	call(t, mc, "nx_task_add", map[string]any{"title": "Add the migration", "context": "db"})
	call(t, mc, "nx_task_update", map[string]any{"id": 1, "status": "completed"})
	call(t, mc, "nx_task_close", map[string]any{})
	call(t, mc, "nx_plan_start", map[string]any{"topic": "Ship the live view", "issues": []any{"Which transport for updates?", "How to lay out the graph?"}, "research_summary": "SSE vs websockets"})
	call(t, mc, "nx_plan_decide", map[string]any{"issue_id": 1, "decision": "Server-sent events driven by inotify"})
	call(t, mc, "nx_task_add", map[string]any{"title": "Write the server", "context": "harness/view"})
	call(t, mc, "nx_task_add", map[string]any{"title": hostileTitle, "context": "hostile", "deps": []any{1}})
	call(t, mc, "nx_task_add", map[string]any{"title": "Draw the graph", "context": "svg", "deps": []any{1, 2}, "owner": "engineer"})
	call(t, mc, "nx_task_update", map[string]any{"id": 1, "status": "completed"})
	ts := func(ago time.Duration) string { return time.Now().Add(-ago).UTC().Format("2006-01-02T15:04:05.000Z") }
	p.write(".nexus/state/nexus/agent-tracker.json", fmt.Sprintf(`[
 {"harness_id":"nexus","agent_name":"architect","agent_id":"a-1","started_at":%q,"stopped_at":%q,"status":"completed","resume_count":1,"last_message":"Decided: SSE.","files_touched":["docs/view.md"]},
 {"harness_id":"nexus","agent_name":"engineer","agent_id":"e-1","started_at":%q,"status":"running","files_touched":["harness/view/view.go","harness/view/graph.go"]}]`,
		ts(50*time.Minute), ts(30*time.Minute), ts(25*time.Minute)))
	p.write(".nexus/state/codex/agent-tracker.json", fmt.Sprintf(`[
 {"harness_id":"codex","agent_name":"reviewer","agent_id":"r-1","started_at":%q,"stopped_at":%q,"status":"completed","last_message":"Looks good <b>to me</b>."}]`,
		ts(20*time.Minute), ts(5*time.Minute)))
	// Thresholds for every gc signal, so the report has something to say.
	p.write(".nexus/nexus.yaml", "memory:\n  gc:\n    min_days_since_access: 0\n    min_cycles_since_access: 0\n    max_access_count: 1\n")
	p.write(".nexus/memory/empirical-sse-latency.md", "# SSE latency\n\nUnder 50 ms on loopback.\n")
	p.write(".nexus/memory/pattern-bounded-reads.md", "# Bounded reads\n\nEvery state file through its limit.\n")
	lastRead := ts(10 * time.Minute)
	p.write(".nexus/state/codex/memory-access.jsonl", fmt.Sprintf(`{"path":%q,"last_accessed_ts":%q,"access_count":2,"last_agent":"reviewer"}`+"\n",
		filepath.Join(p.dir, ".nexus", "memory", "empirical-sse-latency.md"), lastRead))
	p.write(".nexus/state/nexus/memory-access.jsonl", fmt.Sprintf(`{"path":%q,"last_accessed_ts":%q,"access_count":3,"last_agent":"lead"}`+"\n",
		filepath.Join(p.dir, ".nexus", "memory", "empirical-sse-latency.md"), ts(40*time.Minute)))

	v := p.startView(t)
	bctx := browser(t)
	var storeDir string
	{
		out := p.run(p.nexus, "decision", "export")
		var x struct{ Store string }
		json.Unmarshal([]byte(out), &x)
		storeDir = x.Store
	}
	before := snapshot(t, filepath.Join(p.dir, ".nexus"), filepath.Join(p.dir, ".nauro"), p.home)

	// Sign in with the printed address: the token becomes a cookie and
	// leaves the address bar.
	run(t, bctx, "open the printed address", chromedp.Navigate(v.url), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
	loc := get(t, bctx, "location", chromedp.Location())
	if loc != v.base+"/#plan" && loc != v.base+"/" {
		t.Errorf("after sign-in the address is %s", loc)
	}
	if text := eval[string](t, bctx, `document.getElementById("plan-body").textContent`); !strings.Contains(text, "Ship the live view") ||
		!strings.Contains(text, "Server-sent events driven by inotify") || !strings.Contains(text, "How to lay out the graph?") {
		t.Errorf("plan view: %q", text)
	}
	if text := eval[string](t, bctx, `document.getElementById("history-body").textContent`); !strings.Contains(text, "Pick a state store") ||
		!strings.Contains(text, "PostgreSQL, several hosts write at once") {
		t.Errorf("past cycles: %q", text)
	}
	screenshot(t, bctx, "plan")

	// Tasks: the graph, the ready set, the hostile title as text.
	run(t, bctx, "tasks tab", chromedp.Click(chromedp.CSS("#tab-tasks")), chromedp.WaitVisible(chromedp.CSS(`#graph-wrap [data-task-id="3"]`)))
	nodes := eval[[]string](t, bctx, `[...document.querySelectorAll("#graph-wrap [data-task-id]")].map(n => n.getAttribute("aria-label"))`)
	if len(nodes) != 3 {
		t.Errorf("graph nodes: %q", nodes)
	}
	joined := strings.Join(nodes, "\n")
	for _, want := range []string{"Task #1: Write the server. Status completed", "Task #2: " + hostileTitle + ". Status pending, ready", "owner engineer"} {
		if !strings.Contains(joined, want) {
			t.Errorf("graph lacks %q:\n%s", want, joined)
		}
	}
	if eval[bool](t, bctx, `!!document.querySelector("img") || !!window.__pwned`) {
		t.Error("a title was parsed as HTML")
	}
	cols := eval[[]string](t, bctx, `[...document.querySelectorAll("#graph-wrap [data-task-id]")].map(n => n.dataset.taskId + "@" + n.getAttribute("transform"))`)
	t.Logf("graph layout: %v", cols)
	screenshot(t, bctx, "tasks-graph")
	run(t, bctx, "table", chromedp.Click(chromedp.CSS("#show-table")), chromedp.WaitVisible(chromedp.CSS(`#tasks-table tr[data-task-id="2"]`)))
	if text := eval[string](t, bctx, `document.querySelector('#tasks-table tr[data-task-id="2"]').textContent`); !strings.Contains(text, "READY") || !strings.Contains(text, "Escape me") {
		t.Errorf("table row: %q", text)
	}
	screenshot(t, bctx, "tasks-table")
	run(t, bctx, "graph again", chromedp.Click(chromedp.CSS("#show-graph")), chromedp.WaitVisible(chromedp.CSS(`#graph-wrap [data-task-id="1"]`)))

	// Agents of both hosts.
	run(t, bctx, "agents tab", chromedp.Click(chromedp.CSS("#tab-agents")), chromedp.WaitVisible(chromedp.CSS(`tr[data-agent-id="r-1"]`)))
	text := eval[string](t, bctx, `document.getElementById("agents-body").textContent`)
	for _, want := range []string{"Harness nexus", "Harness codex", "architect", "engineer", "reviewer", "Looks good <b>to me</b>.", "2 files"} {
		if !strings.Contains(text, want) {
			t.Errorf("agents view lacks %q: %q", want, text)
		}
	}
	screenshot(t, bctx, "agents")

	// Decisions, and a check from the page against the command line's.
	run(t, bctx, "decisions tab", chromedp.Click(chromedp.CSS("#tab-decisions")), chromedp.WaitVisible(chromedp.CSS(`tr[data-decision="3"]`)))
	if text := eval[string](t, bctx, `document.querySelector('tr[data-decision="2"]').textContent`); !strings.Contains(text, "superseded") || !strings.Contains(text, "D003") {
		t.Errorf("superseded decision row: %q", text)
	}
	approach := "Store the shared state in MySQL instead"
	run(t, bctx, "check", chromedp.SetValue(chromedp.CSS("#check-approach"), approach), chromedp.Click(chromedp.CSS(`#check-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#check-answer[data-done]`)))
	page := eval[string](t, bctx, `document.getElementById("check-answer").textContent`)
	cli := strings.TrimSuffix(p.run(p.nexus, "decision", "check", approach), "\n")
	if page != cli || !strings.Contains(cli, "D003") {
		t.Errorf("page check answer differs from `nexus decision check`:\npage: %q\ncli:  %q", page, cli)
	}
	screenshot(t, bctx, "decisions")

	// Memory with the gc signals.
	run(t, bctx, "memory tab", chromedp.Click(chromedp.CSS("#tab-memory")), chromedp.WaitVisible(chromedp.CSS(`tr[data-note="empirical-sse-latency.md"]`)))
	text = eval[string](t, bctx, `document.querySelector('tr[data-note="empirical-sse-latency.md"]').textContent`)
	// Reads merge both harnesses' logs (2 + 3); the newest read wins.
	for _, want := range []string{"empirical", "5", "reviewer", lastRead, "days", "cycles", "met", "/3"} {
		if !strings.Contains(text, want) {
			t.Errorf("memory row lacks %q: %q", want, text)
		}
	}
	screenshot(t, bctx, "memory")

	// History search, keyboard: the tab list moves with the arrow keys.
	run(t, bctx, "keyboard", chromedp.Focus(chromedp.CSS("#tab-memory")), chromedp.KeyEvent(kb.ArrowLeft),
		chromedp.WaitVisible(chromedp.CSS("#view-decisions")))
	if eval[string](t, bctx, `document.activeElement.id`) != "tab-decisions" {
		t.Error("ArrowLeft on the tab list did not move to the decisions tab")
	}
	run(t, bctx, "history search", chromedp.Click(chromedp.CSS("#tab-plan")), chromedp.SetValue(chromedp.CSS("#history-q"), "nothing-matches"),
		chromedp.Click(chromedp.CSS(`#history-form button`)))
	historyText := func(want string) string {
		return get(t, bctx, "history answer", chromedp.Poll[string](`(t => t.includes(`+strconv.Quote(want)+`) && t)(document.getElementById("history-body").textContent)`))
	}
	if text := historyText("0 cycles matching"); strings.Contains(text, "Pick a state store") {
		t.Errorf("history search for nothing: %q", text)
	}
	run(t, bctx, "history search", chromedp.SetValue(chromedp.CSS("#history-q"), "SEVERAL HOSTS"), chromedp.Click(chromedp.CSS(`#history-form button`)))
	if text := historyText("1 cycle matching"); !strings.Contains(text, "Pick a state store") {
		t.Errorf("history search: %q", text)
	}

	// Read-only: the session of page use changed no file.
	if d := diffSnap(before, snapshot(t, filepath.Join(p.dir, ".nexus"), filepath.Join(p.dir, ".nauro"), p.home)); len(d) > 0 {
		t.Errorf("using the page changed files (store %s):\n%s", storeDir, strings.Join(d, "\n"))
	}

	// Refused: no token, a foreign Origin, a foreign Host.
	resp, err := http.Get(v.base + "/api/summary")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	cookies := eval[string](t, bctx, `document.cookie`) // HttpOnly: the page's script cannot read it
	if cookies != "" {
		t.Errorf("the cookie is readable by script: %q", cookies)
	}
	port := v.base[strings.LastIndex(v.base, ":")+1:]
	for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:1"}} {
		req, _ := http.NewRequest("POST", v.base+"/api/decisions/check", strings.NewReader(`{"approach":"x"}`))
		req.Header.Set("Content-Type", "application/json")
		tok := v.url[strings.Index(v.url, "token=")+6:]
		req.AddCookie(&http.Cookie{Name: "nexus_view_" + port, Value: tok})
		for k, val := range h {
			req.Header.Set(k, val)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %v: %d %s", h, resp.StatusCode, body)
		}
	}

	// Live from the decision store too: a decision proposed on the
	// command line shows in the open decisions view.
	run(t, bctx, "decisions tab", chromedp.Click(chromedp.CSS("#tab-decisions")), chromedp.WaitVisible(chromedp.CSS(`tr[data-decision="3"]`)))
	t0 := time.Now()
	p.run(p.nexus, "decision", "propose", "--title", "Serve the view on loopback only", "--rationale", "The page shows the whole state; no other machine may read it.")
	proposed := time.Since(t0)
	get(t, bctx, "proposed decision shown", chromedp.Poll[bool](`!!document.querySelector('tr[data-decision="4"]')`, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(5*time.Second)))
	storeLatency := time.Since(t0)

	// Live: 20 tasks added over MCP appear in the graph without a reload.
	run(t, bctx, "back to the graph", chromedp.Click(chromedp.CSS("#tab-tasks")), chromedp.WaitVisible(chromedp.CSS(`#graph-wrap [data-task-id="1"]`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.__noReload = 1; window.__pending = {};
window.__arm = (id) => { window.__pending[id] = new Promise((res) => {
  const sel = '#graph-wrap [data-task-id="' + id + '"]';
  if (document.querySelector(sel)) return res(Date.now());
  const mo = new MutationObserver(() => { if (document.querySelector(sel)) { mo.disconnect(); res(Date.now()); } });
  mo.observe(document.body, { childList: true, subtree: true });
  setTimeout(() => { mo.disconnect(); res(-1); }, 5000);
}); return true; }; true`)(ctx, tg)
			return err
		}))
	var lat []time.Duration
	for i := range 20 {
		id := 4 + i
		eval[bool](t, bctx, fmt.Sprintf("window.__arm(%d)", id))
		t0 := time.Now()
		got := call(t, mc, "nx_task_add", map[string]any{"title": fmt.Sprintf("Live task %02d", i), "context": "e2e"})
		if task, _ := got["task"].(map[string]any); task == nil || task["id"] != float64(id) {
			t.Fatalf("nx_task_add answered %v, expected id %d", got, id)
		}
		shownAt := get(t, bctx, "await", chromedp.Evaluate[float64](fmt.Sprintf("window.__pending[%d]", id), chromedp.EvalAwaitPromise))
		if shownAt < 0 {
			t.Fatalf("task #%d did not appear in the graph within 5 s", id)
		}
		lat = append(lat, time.UnixMilli(int64(shownAt)).Sub(t0))
	}
	if eval[int](t, bctx, `window.__noReload || 0`) != 1 {
		t.Error("the page reloaded")
	}
	slices.Sort(lat)
	med := lat[len(lat)/2]
	if med > time.Second {
		t.Errorf("median %v from nx_task_add to the graph showing the task, over 1 s", med)
	}
	_, peak := rss(t, v.cmd.Process.Pid)
	figures(t, fmt.Sprintf("nexus view, %s:", time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  nx_task_add over MCP → task in the graph (Chromium), median of %d: %d ms (min %d, max %d; target ≤ 200 ms, limit 1 s)",
			len(lat), med.Milliseconds(), lat[0].Milliseconds(), lat[len(lat)-1].Milliseconds()),
		fmt.Sprintf("  nexus decision propose → decision in the open page: %d ms (the command itself: %d ms)", storeLatency.Milliseconds(), proposed.Milliseconds()),
		fmt.Sprintf("  nexus view peak RSS on the small project: %.1f MB", float64(peak)/(1<<20)))
	screenshot(t, bctx, "tasks-live")
}

// TestE2EViewScale: 10,000 tasks and 10,000 decisions. The first page
// load of each heavy view reaches interactive (the view on screen filled
// in) within 1 s in headless Chromium, and nexus view's resident set
// stays under 100 MB.
func TestE2EViewScale(t *testing.T) {
	const n = 10000
	p := newProject(t)
	p.run(p.nexus, "decision", "init", "scale")
	var x struct{ Store string }
	json.Unmarshal([]byte(p.run(p.nexus, "decision", "export")), &x)
	writeDecisions(t, x.Store, n)
	p.write(".nexus/state/tasks.json", tasksFile(n))
	p.write(".nexus/state/plan.json", `{"id":1,"topic":"Scale","issues":[{"id":1,"title":"Is it fast?","status":"pending"}],"created_at":"2026-11-27T10:00:00Z"}`)

	start := time.Now()
	v := p.startView(t)
	// Warm: every section built (the decision store's export of 10,000
	// files is the longest).
	c := &http.Client{}
	jar := signIn(t, v)
	var warm time.Duration
	for {
		req, _ := http.NewRequest("GET", v.base+"/api/summary", nil)
		req.AddCookie(jar)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Decisions struct{ Total int }
			Tasks     struct{ Total int }
			Errors    map[string]string
		}
		json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if len(s.Errors) > 0 {
			t.Fatalf("sections failed: %v", s.Errors)
		}
		if s.Decisions.Total == n+1 && s.Tasks.Total == n {
			warm = time.Since(start)
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("not warm after a minute: %+v", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bctx := browser(t)
	run(t, bctx, "sign in", chromedp.Navigate(v.url), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
	lines := []string{fmt.Sprintf("nexus view at %d tasks and %d decisions, %s (server warm after %d ms):", n, n, time.Now().UTC().Format("2006-01-02"), warm.Milliseconds())}
	for _, view := range []string{"tasks", "decisions", "plan", "agents", "memory"} {
		run(t, bctx, "blank", chromedp.Navigate("about:blank"))
		t0 := time.Now()
		run(t, bctx, "load "+view, chromedp.Navigate(v.base+"/#"+view), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
		readyMs := get(t, bctx, "ready time", chromedp.AttributeValue(chromedp.CSS("body"), "data-ready-ms")).Value
		wall := time.Since(t0)
		inPage, _ := strconv.Atoi(readyMs)
		if view == "tasks" {
			if k := eval[int](t, bctx, `document.querySelectorAll("#graph-wrap [data-task-id]").length`); k == 0 || k > 2000 {
				t.Errorf("graph holds %d task nodes", k)
			}
		}
		if view == "decisions" {
			if k := eval[int](t, bctx, `document.querySelectorAll("#decisions-body tr[data-decision]").length`); k != 50 {
				t.Errorf("decision table holds %d rows, want a page of 50", k)
			}
		}
		if time.Duration(inPage)*time.Millisecond > time.Second || wall > time.Second {
			t.Errorf("%s view: interactive after %d ms in the page (%v from navigation in the test), over 1 s", view, inPage, wall)
		}
		lines = append(lines, fmt.Sprintf("  first load of #%-9s to interactive: %4d ms (navigation start → view filled in), %4d ms wall from the test", view, inPage, wall.Milliseconds()))
		screenshot(t, bctx, "scale-"+view)
	}
	// Use: filter, page, check, then measure the resident set.
	run(t, bctx, "filter decisions", chromedp.Navigate("about:blank"), chromedp.Navigate(v.base+"/#decisions"), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.SetValue(chromedp.CSS("#check-approach"), "Adopt kafka for invoices"), chromedp.Click(chromedp.CSS(`#check-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#check-answer[data-done]`)))
	run(t, bctx, "all tasks", chromedp.Navigate("about:blank"), chromedp.Navigate(v.base+"/#tasks"), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)), chromedp.Click(chromedp.CSS("#graph-all")),
		chromedp.Sleep(500*time.Millisecond))
	now, peak := rss(t, v.cmd.Process.Pid)
	if peak > 100<<20 {
		t.Errorf("nexus view peak RSS %.1f MB, over 100 MB", float64(peak)/(1<<20))
	}
	lines = append(lines, fmt.Sprintf("  nexus view RSS: %.1f MB now, %.1f MB peak (limit 100 MB)", float64(now)/(1<<20), float64(peak)/(1<<20)))
	figures(t, lines...)
}

func signIn(t *testing.T, v *viewProc) *http.Cookie {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(v.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		return ck
	}
	t.Fatal("no cookie from the printed address")
	return nil
}

// tasksFile is a tasks.json of n tasks: each depends on up to three
// earlier ones; the first 60% are completed, then some in progress, the
// rest pending.
func tasksFile(n int) string {
	rng := rand.New(rand.NewSource(1))
	var b strings.Builder
	b.WriteString(`{"goal":"scale","decisions":[],"tasks":[`)
	for i := 1; i <= n; i++ {
		status := "pending"
		switch {
		case i <= n*6/10:
			status = "completed"
		case i <= n*65/100:
			status = "in_progress"
		}
		var deps []string
		for k := rng.Intn(4); k > 0 && i > 1; k-- {
			deps = append(deps, strconv.Itoa(max(1, i-1-rng.Intn(min(i-1, 200)))))
		}
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"title":"Task %d of the scale project","context":"c","status":%q,"deps":[%s],"owner":"engineer-%d"}`, i, i, status, strings.Join(deps, ","), i%7)
	}
	b.WriteString("]}")
	return b.String()
}

// writeDecisions adds decisions 2..n+1 to a store (1 is the scaffold's
// seed); every ninth is superseded by the next.
func writeDecisions(t *testing.T, store string, n int) {
	t.Helper()
	words := strings.Fields("postgresql redis kafka invoices payments ledger tenants cache queue worker retries backoff gateway graphql pagination webhook")
	for i := 2; i <= n+1; i++ {
		status, extra := "active", ""
		if i%9 == 0 {
			status, extra = "superseded", fmt.Sprintf("superseded_by: '%d'\n", i+1)
		}
		if (i-1)%9 == 0 && i > 9 {
			extra += fmt.Sprintf("supersedes: '%d'\n", i-1)
		}
		w := func(k int) string {
			out := make([]string, k)
			for j := range out {
				out[j] = words[(i*7+j*3)%len(words)]
			}
			return strings.Join(out, " ")
		}
		text := fmt.Sprintf("---\ndate: 2026-01-05\nversion: 1\nstatus: %s\nconfidence: medium\n%s---\n\n# %03d \u2014 Adopt %s %d\n\n## Decision\n\n%s.\n",
			status, extra, i, w(3), i, w(30))
		if err := os.WriteFile(filepath.Join(store, "decisions", fmt.Sprintf("%03d-d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
