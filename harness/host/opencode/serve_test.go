package opencode_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/opencode"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/vocabulary"
)

// project is a fresh project with the vendored distribution, and the
// engine builder `nexus hook --host opencode` would give ServeHooks
// (counting the engines it builds).
type project struct {
	dir    string
	core   *vocabulary.Core
	builds atomic.Int32
}

func newProject(t *testing.T) *project {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	return &project{dir: dir, core: core}
}

func (p *project) engine(_ context.Context, ev lifecycle.Event) (*lifecycle.Engine, error) {
	p.builds.Add(1)
	if ev.Dir != p.dir {
		return nil, errors.New("the engine was asked for " + ev.Dir + ", not the project")
	}
	he, err := harness.New(harness.Options{Project: p.dir, HarnessID: opencode.Name, Core: p.core, Gate: gate.Options{ToolPrefix: "nx_"}})
	if err != nil {
		return nil, err
	}
	mem, err := memory.New(memory.Options{Store: he.Store, Policy: p.core.MemoryPolicy(), ToolPrefix: "nx_"})
	if err != nil {
		return nil, err
	}
	return lifecycle.New(lifecycle.Options{
		Store: he.Store, Core: p.core, ToolPrefix: "nx_", Host: opencode.Host{}.Profile(host.Env{Project: p.dir}),
		Tools: he, ToolClasses: he.ToolClasses(), Memory: mem,
	}), nil
}

// tool runs a nexus tool as the MCP server, another process, would.
func (p *project) tool(t *testing.T, name string, args map[string]any) {
	t.Helper()
	he, err := harness.New(harness.Options{Project: p.dir, Core: p.core, Gate: gate.Options{ToolPrefix: "nx_"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := he.CallTool(context.Background(), name, args)
	if err != nil || res["error"] != nil {
		t.Fatalf("%s: %v %v", name, err, res)
	}
}

func (p *project) write(t *testing.T, rel, content string) {
	t.Helper()
	full := filepath.Join(p.dir, rel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recorded returns the requests of a session recorded from real OpenCode
// (testdata/sessions), moved into dir.
func recorded(t *testing.T, name, dir string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sessions", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(dir)
	b = bytes.ReplaceAll(b, []byte(`"/home/user/proj`), d[:len(d)-1])
	return bytes.SplitAfter(bytes.TrimSpace(b), []byte("\n"))
}

// child is ServeHooks running as the plugin's long-lived child: requests
// written one at a time, each reply read before the next request.
type child struct {
	t    *testing.T
	w    *io.PipeWriter
	r    *bufio.Reader
	done chan error
}

func startChild(t *testing.T, r host.Runner) *child {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &child{t: t, w: inW, r: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := opencode.Host{}.ServeHooks(context.Background(), inR, outW, r, true)
		outW.Close()
		c.done <- err
	}()
	return c
}

func (c *child) ask(line []byte) opencode.Reply {
	c.t.Helper()
	if _, err := c.w.Write(append(bytes.TrimSpace(line), '\n')); err != nil {
		c.t.Fatal(err)
	}
	out, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("no reply: %v", err)
	}
	var rep opencode.Reply
	if err := json.Unmarshal(out, &rep); err != nil {
		c.t.Fatalf("reply %q: %v", out, err)
	}
	return rep
}

func (c *child) close() error {
	c.w.Close()
	return <-c.done
}

// TestServeHooksSession replays a recorded OpenCode session through the
// long-lived child with the real lifecycle engine: one engine for the
// whole session, the Lead's context on its first message, the gate's
// refusal thrown, the architect tracked running and then completed, both
// memory reads (read, cat) recorded, and dispose ending the session.
func TestServeHooksSession(t *testing.T) {
	p := newProject(t)
	p.write(t, ".nexus/memory/lesson.md", "# lesson\n")
	var stderr bytes.Buffer
	c := startChild(t, host.Runner{Engine: p.engine, Policy: func() string { return "fail-open" }, Stderr: &stderr})
	tracker := func() []state.TrackerEntry {
		var out []state.TrackerEntry
		b, _ := os.ReadFile(filepath.Join(p.dir, ".nexus/state/opencode/agent-tracker.json"))
		_ = json.Unmarshal(b, &out)
		return out
	}
	replies := map[uint64]opencode.Reply{}
	var runningSeen bool
	for _, line := range recorded(t, "tools", p.dir) {
		req, err := opencode.DecodeRequest(line)
		if err != nil {
			t.Fatal(err)
		}
		rep := c.ask(line)
		if rep.ID != req.ID || rep.Error != "" {
			t.Fatalf("request %d (%s): reply %+v", req.ID, req.Hook, rep)
		}
		replies[req.ID] = rep
		if req.ID == 13 {
			// Meanwhile the Lead registers the architect's task through
			// the MCP server (another process): the child's engine sees it.
			p.tool(t, "task_add", map[string]any{"title": "Design the store", "context": "e2e", "owner": "architect", "acceptance": "a reviewed design"})
		}
		if req.ID == 19 { // the architect's last tool call, before its task's result
			tr := tracker()
			runningSeen = len(tr) == 1 && tr[0].AgentName == "architect" && tr[0].Status == state.AgentRunning
		}
		if req.ID == 22 { // before dispose
			tr := tracker()
			if len(tr) != 1 || tr[0].Status != state.AgentCompleted || tr[0].AgentID != "ses_de4d0c36cffeRL4fz1XWxwTYWU" || tr[0].LastMessage == nil || *tr[0].LastMessage != "ARCH-DONE the design" {
				t.Errorf("tracker after the task's result: %+v", tr)
			}
		}
	}
	if err := c.close(); err != nil {
		t.Errorf("ServeHooks: %v", err)
	}
	if n := p.builds.Load(); n != 1 {
		t.Errorf("%d engines built for one session, want 1", n)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	if !runningSeen {
		t.Error("the architect was not tracked running while its task ran")
	}
	if parts := replies[2].Parts; len(parts) == 0 || !strings.Contains(parts[0], "nexus is active for this project") || !strings.Contains(strings.Join(parts, "\n"), "nx-plan") {
		t.Errorf("the Lead's first message got %q, want the session's context and the [plan] skill", parts)
	}
	if b := replies[3].Block; !strings.Contains(b, "nexus denied write of notes.txt") {
		t.Errorf("the unplanned write: %q", b)
	}
	if parts := replies[15].Parts; len(parts) == 0 || !strings.Contains(parts[0], "architect") {
		t.Errorf("the architect's first message got %q", parts)
	}
	if a := replies[20].Append; !strings.Contains(a, "task #1 (Design the store) has acceptance criteria") {
		t.Errorf("the task's result got %q, want the completion's note for Lead", a)
	}
	b, err := os.ReadFile(filepath.Join(p.dir, ".nexus/state/opencode/memory-access.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Path        string `json:"path"`
		AccessCount int    `json:"access_count"`
		LastAgent   string `json:"last_agent"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &rec); err != nil || rec.AccessCount != 2 || rec.LastAgent != "lead" || filepath.Base(rec.Path) != "lesson.md" {
		t.Errorf("memory-access.jsonl %s (%v): want lesson.md read twice by lead (read and cat)", b, err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".nexus/state/opencode/agent-tracker.json")); err == nil {
		t.Error("the tracker survived dispose: the session did not end")
	}
}

// TestServeHooksPolicy: what the child answers when nexus cannot judge a
// request, per hook and gate.policy.
func TestServeHooksPolicy(t *testing.T) {
	p := newProject(t)
	noEngine := func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
		return nil, errors.New("nexus-core distribution not found\n(looked in 3 places)")
	}
	panics := func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) { panic("boom") }
	// The session record cannot be read (a folder in its place): handling
	// fails inside nexus.
	if err := os.MkdirAll(filepath.Join(p.dir, ".nexus/state/opencode/sessions.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, _ := json.Marshal(p.dir)
	gateReq := `{"v":1,"id":7,"hook":"tool.execute.before","pid":1,"dir":` + string(dir) + `,"input":{"tool":"write","sessionID":"s","callID":"c"},"output":{"args":{"filePath":"a"}}}`
	chatReq := `{"v":1,"id":8,"hook":"chat.message","pid":1,"dir":` + string(dir) + `,"input":{"sessionID":"s"},"output":{"parts":[{"type":"text","text":"hi"}]}}`
	badGate := `{"v":1,"id":9,"hook":"tool.execute.before","pid":1,"dir":` + string(dir) + `,"input":{"tool":"write","sessionID":"s"},"output":{"args":[1]}}`
	for _, tt := range []struct {
		name, policy, req string
		engine            func(context.Context, lifecycle.Event) (*lifecycle.Engine, error)
		block, stderr     string // "" = no block
	}{
		{"no engine, the gate", "fail-open", gateReq, noEngine, "could not load what it checks tool calls with (nexus-core distribution not found; (looked in 3 places))", "distribution not found"},
		{"no engine, another hook", "fail-closed", chatReq, noEngine, "", "distribution not found"},
		{"unreadable tool call, fail-open", "fail-open", badGate, p.engine, "could not read the call to check it", "must be a JSON object"},
		{"panic on the gate, fail-open", "fail-open", gateReq, panics, "", "internal error: boom"},
		{"panic on the gate, fail-closed", "fail-closed", gateReq, panics, "gate.policy is fail-closed", "internal error: boom"},
		{"nexus fails on the gate, fail-open", "fail-open", gateReq, p.engine, "", "sessions.json"},
		{"nexus fails on the gate, fail-closed", "fail-closed", gateReq, p.engine, "nexus could not check this tool call (", "sessions.json"},
		{"nexus fails on another hook, fail-closed", "fail-closed", chatReq, p.engine, "", "sessions.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			r := host.Runner{Engine: tt.engine, Policy: func() string { return tt.policy }, Stderr: &stderr}
			if err := (opencode.Host{}).ServeHooks(context.Background(), strings.NewReader(tt.req+"\n"), &out, r, false); err != nil {
				t.Fatal(err)
			}
			var rep opencode.Reply
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.ID == 0 || rep.Error != "" {
				t.Fatalf("reply %q (%v)", out.String(), err)
			}
			if tt.block == "" && rep.Block != "" || tt.block != "" && !strings.Contains(rep.Block, tt.block) {
				t.Errorf("block %q, want %q", rep.Block, tt.block)
			}
			if !strings.HasPrefix(stderr.String(), "nexus hook: ") || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q, want one line with %q", stderr.String(), tt.stderr)
			}
		})
	}
}

// Without serve, the child answers the first request and leaves.
func TestServeHooksOnce(t *testing.T) {
	p := newProject(t)
	lines := recorded(t, "tools", p.dir)
	var out bytes.Buffer
	in := bytes.NewReader(bytes.Join(lines[:3], nil))
	r := host.Runner{Engine: p.engine, Policy: func() string { return "fail-open" }, Stderr: io.Discard}
	if err := (opencode.Host{}).ServeHooks(context.Background(), in, &out, r, false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n"); got != 1 || !strings.HasPrefix(out.String(), `{"id":1}`) {
		t.Errorf("answered %q, want the first request only", out.String())
	}
}

// TestServeHooksFilesTouched: an engineer spawned through the task tool
// writes one file with write and two with apply_patch (an add and a
// move); when the task's result comes, its tracker entry is completed
// with every file it touched, in OpenCode's harness namespace.
func TestServeHooksFilesTouched(t *testing.T) {
	p := newProject(t)
	p.tool(t, "task_add", map[string]any{"title": "Build the store", "context": "unit", "owner": "engineer"})
	p.write(t, "old.go", "package old\n")
	var stderr bytes.Buffer
	c := startChild(t, host.Runner{Engine: p.engine, Policy: func() string { return "fail-closed" }, Stderr: &stderr})
	const root, kid = "ses_root", "ses_kid"
	id := uint64(0)
	ask := func(hook string, input, output any) opencode.Reply {
		t.Helper()
		id++
		line, err := json.Marshal(map[string]any{"v": opencode.ProtocolVersion, "id": id, "hook": hook, "pid": 4242, "dir": p.dir, "input": input, "output": output})
		if err != nil {
			t.Fatal(err)
		}
		rep := c.ask(line)
		if rep.Error != "" || rep.Block != "" {
			t.Fatalf("request %d (%s): %+v", id, hook, rep)
		}
		return rep
	}
	text := func(sess, s string) map[string]any {
		return map[string]any{"message": map[string]any{"id": "msg_" + sess, "role": "user", "sessionID": sess}, "parts": []any{map[string]any{"type": "text", "text": s, "id": "prt_" + sess, "sessionID": sess}}}
	}
	tool := func(sess, name, call string, args map[string]any, out any) {
		ask("tool.execute.before", map[string]any{"tool": name, "sessionID": sess, "callID": call}, map[string]any{"args": args})
		ask("tool.execute.after", map[string]any{"tool": name, "sessionID": sess, "callID": call, "args": args}, out)
	}
	ask("chat.message", map[string]any{"sessionID": root}, text(root, "build the store"))
	taskArgs := map[string]any{"description": "Build it", "prompt": "build the store", "subagent_type": "engineer"}
	ask("tool.execute.before", map[string]any{"tool": "task", "sessionID": root, "callID": "call_task"}, map[string]any{"args": taskArgs})
	ask("event", map[string]any{"event": map[string]any{"type": "session.created", "properties": map[string]any{"sessionID": kid, "info": map[string]any{"id": kid, "parentID": root, "agent": "engineer"}}}}, nil)
	ask("chat.message", map[string]any{"sessionID": kid, "agent": "engineer"}, text(kid, "build the store"))
	tool(kid, "write", "call_w", map[string]any{"filePath": "store.go", "content": "package store\n"}, map[string]any{"output": "Wrote file successfully."})
	tool(kid, "apply_patch", "call_p", map[string]any{"patchText": "*** Begin Patch\n*** Add File: store_test.go\n+package store\n*** Update File: old.go\n*** Move to: new.go\n@@\n-package old\n+package new\n*** End Patch"}, map[string]any{"output": "Success."})
	ask("tool.execute.after", map[string]any{"tool": "task", "sessionID": root, "callID": "call_task", "args": taskArgs},
		map[string]any{"metadata": map[string]any{"sessionId": kid, "parentSessionId": root}, "output": "<task id=\"" + kid + "\" state=\"completed\">\n<task_result>\nbuilt\n</task_result>\n</task>"})
	b, err := os.ReadFile(filepath.Join(p.dir, ".nexus/state/opencode/agent-tracker.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr []state.TrackerEntry
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr) != 1 || tr[0].AgentID != kid || tr[0].AgentName != "engineer" || tr[0].Status != state.AgentCompleted {
		t.Fatalf("tracker: %s", b)
	}
	got, want := slices.Sorted(slices.Values(tr[0].FilesTouched)), []string{"new.go", "old.go", "store.go", "store_test.go"}
	if !slices.Equal(got, want) {
		t.Errorf("files_touched %q, want %q", tr[0].FilesTouched, want)
	}
	if err := c.close(); err != nil {
		t.Errorf("ServeHooks: %v", err)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}
