package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordHook is the fake hook command (the test binary with
// CONFORMANCE_FAKE_HOOK=record): it appends what it was given to
// $FAKE_HOOK_LOG, one JSON line per run.
func recordHook() int {
	in, _ := io.ReadAll(os.Stdin)
	wd, _ := os.Getwd()
	line, _ := json.Marshal(map[string]any{
		"payload": json.RawMessage(in), "cwd": wd,
		"root": os.Getenv("NEXUS_RUNTIME_ROOT"), "harness": os.Getenv("NEXUS_HARNESS_ID"), "claude_project": os.Getenv("CLAUDE_PROJECT_DIR"),
	})
	f, err := os.OpenFile(os.Getenv("FAKE_HOOK_LOG"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
	return 0
}

type hookRun struct {
	Payload       map[string]any `json:"payload"`
	CWD           string         `json:"cwd"`
	Root          string         `json:"root"`
	Harness       string         `json:"harness"`
	ClaudeProject string         `json:"claude_project"`
}

func fakeHook(t *testing.T, mode, protocol string) (*HookFactory, func() []hookRun) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "hook.log")
	f := &HookFactory{Command: []string{exe}, Protocol: protocol, Env: []string{"CONFORMANCE_FAKE_HOOK=" + mode, "FAKE_HOOK_LOG=" + log}}
	return f, func() []hookRun {
		b, _ := os.ReadFile(log)
		var runs []hookRun
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var r hookRun
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		return runs
	}
}

// scratchProject has a tracker that knows agent a1 as "architect".
func scratchProject(t *testing.T) Project {
	dir := t.TempDir()
	p := Project{Dir: dir, NexusDir: filepath.Join(dir, ".nexus"), HarnessID: "claude-nexus"}
	tracker := filepath.Join(p.NexusDir, "state", p.HarnessID, "agent-tracker.json")
	os.MkdirAll(filepath.Dir(tracker), 0o755)
	os.WriteFile(tracker, []byte(`[{"agent_id":"a1","agent_name":"architect"}]`), 0o644)
	return p
}

func TestHookTargetClaude(t *testing.T) {
	f, runs := fakeHook(t, "record", HookClaude)
	p := scratchProject(t)
	tg, err := f.NewTarget(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	err = tg.Event(context.Background(), EventAgentComplete, map[string]any{"agent_id": "a1", "last_message": "done", "files_touched": []any{"src/foo.ts", "bar.ts"}})
	if err != nil {
		t.Fatal(err)
	}
	got := runs()
	if len(got) != 3 {
		t.Fatalf("%d hook runs, want 2 PostToolUse and a SubagentStop: %+v", len(got), got)
	}
	for i, r := range got {
		if r.CWD != p.Dir || r.Root != p.NexusDir || r.Harness != "claude-nexus" || r.ClaudeProject != p.Dir {
			t.Errorf("run %d: cwd %s, NEXUS_RUNTIME_ROOT %s, NEXUS_HARNESS_ID %s, CLAUDE_PROJECT_DIR %s", i, r.CWD, r.Root, r.Harness, r.ClaudeProject)
		}
		if r.Payload["agent_id"] != "a1" || r.Payload["agent_type"] != "claude-nexus:architect" || r.Payload["cwd"] != p.Dir {
			t.Errorf("run %d: payload %v", i, r.Payload)
		}
	}
	post := got[0].Payload
	abs := filepath.Join(p.Dir, "src", "foo.ts")
	if post["hook_event_name"] != "PostToolUse" || post["tool_name"] != "Write" || post["tool_input"].(map[string]any)["file_path"] != abs {
		t.Errorf("PostToolUse payload %v", post)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Errorf("the written file does not exist: %v", err)
	}
	if stop := got[2].Payload; stop["hook_event_name"] != "SubagentStop" || stop["last_assistant_message"] != "done" {
		t.Errorf("SubagentStop payload %v", stop)
	}
	// A spawn names its agent type from the event itself.
	if err := tg.Event(context.Background(), EventAgentSpawn, map[string]any{"harness_id": "other-harness", "agent_name": "engineer", "agent_id": "e1"}); err != nil {
		t.Fatal(err)
	}
	if r := runs()[3].Payload; r["hook_event_name"] != "SubagentStart" || r["agent_type"] != "other-harness:engineer" {
		t.Errorf("SubagentStart payload %v", r)
	}
}

func TestHookPayloads(t *testing.T) {
	p := scratchProject(t)
	msg := "m"
	for _, tc := range []struct {
		protocol, typ string
		params        map[string]any
		want          []string // event name (and more) per payload, as compact JSON fragments
		err           string
	}{
		{HookNeutral, EventAgentSpawn, map[string]any{"agent_name": "architect", "agent_id": "x"}, []string{`"event":"subagent_spawn"`, `"agent_type":"architect"`}, ""},
		{HookNeutral, EventAgentResume, map[string]any{"agent_id": "a1"}, []string{`"event":"subagent_resume"`, `"agent_type":"architect"`}, ""},
		{HookNeutral, EventAgentComplete, map[string]any{"agent_id": "a1", "last_message": msg, "files_touched": []any{"a.go"}}, []string{`"event":"subagent_complete"`, `"files_touched":["a.go"]`, `"last_message":"m"`}, ""},
		{HookClaude, EventAgentResume, map[string]any{"agent_id": "a1"}, []string{`"hook_event_name":"SubagentStart"`, `"agent_type":"claude-nexus:architect"`}, ""},
		{HookClaude, EventAgentResume, map[string]any{"agent_id": "unknown"}, []string{`"hook_event_name":"SubagentStart"`}, ""},
		{HookClaude, EventAgentSpawn, map[string]any{"agent_name": "a", "agent_id": "x", "model": "opus"}, nil, `parameter "model" has no place`},
		{HookClaude, EventAgentSpawn, map[string]any{"agent_name": "a"}, nil, "agent_id is required"},
		{HookClaude, "agent_pause", map[string]any{"agent_id": "x"}, nil, "unknown lifecycle event"},
		{"cursor", EventAgentSpawn, map[string]any{"agent_id": "x"}, nil, "unknown hook protocol"},
	} {
		got, err := HookPayloads(tc.protocol, p, tc.typ, tc.params)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s %v: error %v, want %q", tc.protocol, tc.typ, tc.params, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != 1 {
			t.Errorf("%s %s: %d payloads, %v", tc.protocol, tc.typ, len(got), err)
			continue
		}
		b, _ := json.Marshal(got[0].Body)
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s %s: payload %s lacks %s", tc.protocol, tc.typ, b, w)
			}
		}
		if tc.typ == EventAgentResume && tc.params["agent_id"] == "unknown" && strings.Contains(string(b), "agent_type") {
			t.Errorf("an agent the tracker does not know gets no agent_type: %s", b)
		}
	}
}

func TestHookTargetFailures(t *testing.T) {
	f, _ := fakeHook(t, "fail", HookClaude)
	p := scratchProject(t)
	tg, _ := f.NewTarget(context.Background(), p)
	err := tg.Event(context.Background(), EventAgentResume, map[string]any{"agent_id": "a1"})
	te := AsToolError(err)
	if te == nil || te.Form != ErrorHook || te.Message != "blocked: the fake hook refuses" || !strings.Contains(te.Note, "SubagentStart") {
		t.Fatalf("a hook exiting 2: %#v", err)
	}
	// A files_touched entry outside the project is refused, not written.
	rec, _ := fakeHook(t, "record", HookClaude)
	tg, _ = rec.NewTarget(context.Background(), p)
	if err := tg.Event(context.Background(), EventAgentComplete, map[string]any{"agent_id": "a1", "files_touched": []any{"../escape.txt"}}); err == nil || !strings.Contains(err.Error(), "not a path inside the project") {
		t.Fatalf("escaping path: %v", err)
	}
	if _, err := tg.CallTool(context.Background(), "plan_start", nil); err == nil || AsToolError(err) != nil {
		t.Fatalf("a tool call through a hook target must be a target error: %v", err)
	}
}

// Through the runner: lifecycle fixtures run through the hook command, tool
// fixtures are skipped; with Combined, tools go to MCP and events to hooks,
// each side started only when needed.
func TestHookTargetRunner(t *testing.T) {
	hooks, runs := fakeHook(t, "record", HookClaude)
	spawn := fixture("h_spawn", `"event": {"type": "agent_spawn", "params": {"agent_name": "architect", "agent_id": "a9"}}`)
	text := fixture("h_text", `"action": {"tool": "text", "params": {}}, "postcondition": {"return_value": {"$.created": true}}`)
	results := runFixturesWith(t, hooks, spawn, text)
	if results[0].Status != Pass || results[1].Status != Skip || !strings.Contains(results[1].SkipReason, "--target") {
		t.Fatalf("hooks alone: %s %s (%s) %s", results[0].Status, results[1].Status, results[1].SkipReason, failureText(results[0]))
	}
	if n := len(runs()); n != 1 {
		t.Fatalf("%d hook runs, want 1", n)
	}
	// The MCP side of this harness cannot start; only the tool case
	// notices.
	broken := fakeMCPFactory(t, "crash")
	results = runFixturesWith(t, &Combined{Tools: broken, Events: hooks}, spawn, text)
	if results[0].Status != Pass || results[1].Status != Fail || !strings.Contains(failureText(results[1]), "refusing to start") {
		t.Fatalf("combined: %s %s: %s", results[0].Status, results[1].Status, failureText(results[1]))
	}
	results = runFixturesWith(t, &Combined{Tools: fakeMCPFactory(t, "1"), Events: hooks}, spawn, text)
	if results[0].Status != Pass || results[1].Status != Pass {
		t.Fatalf("combined: %s %s: %s", results[0].Status, results[1].Status, failureText(results[1]))
	}
}

// A target that cannot start is found before any case runs.
func TestRunnerCheck(t *testing.T) {
	exe, _ := os.Executable()
	for _, tc := range []struct {
		name string
		f    Factory
		want string // "" = starts
	}{
		{"mcp", fakeMCPFactory(t, "1"), ""},
		{"mcp crashing", fakeMCPFactory(t, "crash"), "refusing to start"},
		{"mcp missing", &MCPFactory{Command: []string{"no-such-harness-binary"}}, "not found"},
		{"mcp directory", &MCPFactory{Command: []string{t.TempDir()}}, "not an executable file"},
		{"hook", &HookFactory{Command: []string{exe}, Protocol: HookClaude}, ""},
		{"hook missing", &HookFactory{Command: []string{"no-such-hook-binary"}, Protocol: HookClaude}, "not found"},
		{"hook protocol", &HookFactory{Command: []string{exe}, Protocol: "cursor"}, "unknown hook protocol"},
		{"combined", &Combined{Tools: fakeMCPFactory(t, "crash"), Events: &HookFactory{Command: []string{exe}, Protocol: HookClaude}}, "refusing to start"},
	} {
		r, err := NewRunner(Options{Factory: tc.f, Schemas: testSchemas(t), TempDir: t.TempDir(), CaseTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Check(context.Background())
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Check = %v, want %q", tc.name, err, tc.want)
		}
	}
}
