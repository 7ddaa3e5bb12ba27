package claude_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeMemory records what the engine reports to the memory lifecycle.
type fakeMemory struct{ calls []string }

func (m *fakeMemory) Observe(_ context.Context, path, agent string, at time.Time) error {
	m.calls = append(m.calls, fmt.Sprintf("observe %s by %s at %s", path, agent, state.Format(at)))
	return nil
}
func (m *fakeMemory) SaveFromTag(_ context.Context, text string) (string, error) {
	m.calls = append(m.calls, "save "+text)
	return "saved", nil
}
func (m *fakeMemory) GCFromTag(_ context.Context, text string) (string, error) {
	m.calls = append(m.calls, "gc "+text)
	return "gc report", nil
}
func (m *fakeMemory) AutoGC(context.Context) (string, error) {
	m.calls = append(m.calls, "autogc")
	return "", nil
}

// sessionEnv is one project driven through hook invocations, each with a
// fresh engine as a separate hook process would build it.
type sessionEnv struct {
	t       *testing.T
	project string
	core    *vocabulary.Core
	schemas *schema.Set
	mem     *fakeMemory
	now     time.Time
	home    string // the user's home folder ("" = none)
}

func newSessionEnv(t *testing.T) *sessionEnv {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return &sessionEnv{
		t:       t,
		project: t.TempDir(),
		core:    core,
		schemas: schema.NewCoreSet(core.Dir),
		mem:     &fakeMemory{},
		now:     time.Date(2026, 4, 16, 9, 0, 0, 0, time.UTC),
	}
}

func (s *sessionEnv) clock() time.Time { return s.now }

func (s *sessionEnv) harness() *harness.Engine {
	he, err := harness.New(harness.Options{
		Project: s.project, Core: s.core, Schemas: s.schemas, Gate: gate.Options{ToolPrefix: "nx_"},
		Now: s.clock, Branch: func() string { return "main" },
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return he
}

func (s *sessionEnv) engine(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
	he := s.harness()
	o := lifecycle.Options{
		Store: he.Store, Core: he.Core, ToolPrefix: "nx_", Host: claude.Host{}.Profile(host.Env{Project: s.project, Home: s.home}),
		Tools: he, ToolClasses: he.ToolClasses(), Memory: s.mem, Now: s.clock,
	}
	return lifecycle.New(o), nil
}

// hook runs one payload the way `nexus hook --host claude` does.
func (s *sessionEnv) hook(payload []byte, event string) (stdout, stderr string) {
	var out, errb bytes.Buffer
	r := host.Runner{Codec: claude.Host{}.Codec(), Event: event, Engine: s.engine, Policy: func() string { return "fail-open" }, Stderr: &errb}
	if code := r.Run(context.Background(), bytes.NewReader(payload), &out); code != 0 {
		s.t.Fatalf("exit code %d", code)
	}
	return out.String(), errb.String()
}

func (s *sessionEnv) write(rel, content string) {
	p := filepath.Join(s.project, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sessionEnv) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(s.project, rel))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// normalise replaces the temporary project path in output.
func (s *sessionEnv) normalise(text string) string {
	return strings.ReplaceAll(text, s.project, "{{PROJECT}}")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "session", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, lineDiff(string(want), got))
	}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d:\nwant: %q\n got: %q", i+1, a, b)
		}
	}
	return "(no line differs)"
}

func pretty(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return "(no output)\n"
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return "NOT JSON: " + out + "\n"
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}

// TestRecordedSession replays a whole Claude Code session — Lead start, a
// [plan] prompt, two subagents in parallel with their tool calls (the
// architect's edits denied by no_file_edit), a memory read, both subagents
// stopping, a decision, compaction and session end — and checks replies,
// tracker and tool log against goldens and the state schemas.
func TestRecordedSession(t *testing.T) {
	s := newSessionEnv(t)
	// Project knowledge that must survive the session untouched.
	s.write(".nexus/memory/pattern-http-caching.md", "# HTTP caching\n")
	s.write(".nexus/context/architecture.md", "# Architecture\n")
	s.write(".nexus/rules/style.md", "Use gofmt.\n")
	history := `{"schema_version":"0.5","cycles":[{"completed_at":"2026-01-02T03:04:05.000Z","branch":"main","plan":null,"tasks":[]}]}` + "\n"
	s.write(".nexus/history.json", history)
	s.write(".nexus/state/agent-tracker.json", "[]\n") // legacy pre-0.7 tracker

	testdata, err := filepath.Abs(filepath.Join("testdata", "session"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(testdata, "[0-9][0-9]-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	sort.Strings(files)
	projJSON, _ := json.Marshal(s.project)
	var replies strings.Builder
	var trackerAfterStops, toolLog string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		payload := strings.ReplaceAll(string(raw), "{{PROJECT}}", strings.Trim(string(projJSON), `"`))
		payload = strings.ReplaceAll(payload, "{{TESTDATA}}", testdata)
		s.now = s.now.Add(time.Second)
		fmt.Fprintf(&replies, "== %s ==\n", name)
		if strings.Contains(name, "-mcp-") {
			// The MCP server's side of the session: the tool runs.
			var call struct {
				Tool string         `json:"mcp_tool"`
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal([]byte(payload), &call); err != nil {
				t.Fatal(err)
			}
			res, err := s.harness().CallTool(context.Background(), call.Tool, call.Args)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			fmt.Fprintf(&replies, "(nexus mcp ran %s: %v)\n", call.Tool, res["error"] == nil)
			continue
		}
		out, errOut := s.hook([]byte(payload), "")
		if errOut != "" {
			t.Errorf("%s: stderr %q", name, errOut)
		}
		replies.WriteString(s.normalise(pretty(out)))
		if strings.HasSuffix(name, "SubagentStop-engineer") {
			trackerAfterStops = s.read(".nexus/state/nexus/agent-tracker.json")
			toolLog = s.read(".nexus/state/nexus/tool-log.jsonl")
		}
		checkStep(t, s, name, out)
	}

	// The tracker: exactly the schema, both agents completed.
	var tracker any
	if err := json.Unmarshal([]byte(trackerAfterStops), &tracker); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.schemas.Validate(schema.StateTracker, tracker); err != nil || len(ps) > 0 {
		t.Errorf("tracker does not match agent-tracker.schema.json: %v %v", err, ps)
	}
	var entries []state.TrackerEntry
	_ = json.Unmarshal([]byte(trackerAfterStops), &entries)
	if len(entries) != 2 {
		t.Fatalf("tracker has %d entries", len(entries))
	}
	arch, eng := entries[0], entries[1]
	if arch.AgentName != "architect" || eng.AgentName != "engineer" {
		t.Errorf("agent names %q %q (want the bare roles)", arch.AgentName, eng.AgentName)
	}
	if arch.Status != state.AgentCompleted || eng.Status != state.AgentCompleted {
		t.Errorf("statuses %q %q", arch.Status, eng.Status)
	}
	if strings.Join(eng.FilesTouched, ",") != "src/client/cache.go,src/client/cache_test.go" {
		t.Errorf("engineer files_touched %v", eng.FilesTouched)
	}
	if len(arch.FilesTouched) != 0 {
		t.Errorf("architect files_touched %v (its edits were denied)", arch.FilesTouched)
	}
	if eng.LastMessage == nil || !strings.Contains(*eng.LastMessage, "TestCacheHit still fails") {
		t.Errorf("engineer last_message %v (from its transcript)", eng.LastMessage)
	}
	// Every tool-log line decodes, and every tool call is there.
	var lines []lifecycle.ToolLogLine
	for _, l := range strings.Split(strings.TrimSpace(toolLog), "\n") {
		var tl lifecycle.ToolLogLine
		if err := json.Unmarshal([]byte(l), &tl); err != nil {
			t.Fatalf("tool log line %q: %v", l, err)
		}
		lines = append(lines, tl)
	}
	if len(lines) != 9 {
		t.Errorf("tool log has %d lines, want 9 (6 completed calls + 3 denials)", len(lines))
	}

	golden(t, "replies.txt", replies.String())
	golden(t, "agent-tracker.json", trackerAfterStops)
	golden(t, "tool-log.jsonl", s.normalise(toolLog))
	golden(t, "memory.txt", s.normalise(strings.Join(s.mem.calls, "\n")+"\n"))

	// Session end: harness-local files gone, project knowledge untouched.
	for _, gone := range []string{"state/nexus/agent-tracker.json", "state/nexus/tool-log.jsonl", "state/nexus/active-skill.json", "state/agent-tracker.json"} {
		if state.Exists(filepath.Join(s.project, ".nexus", gone)) {
			t.Errorf(".nexus/%s survived session end", gone)
		}
	}
	if got := s.read(".nexus/history.json"); got != history {
		t.Errorf("history.json changed:\n%s", got)
	}
	for rel, want := range map[string]string{".nexus/memory/pattern-http-caching.md": "# HTTP caching\n", ".nexus/context/architecture.md": "# Architecture\n", ".nexus/rules/style.md": "Use gofmt.\n"} {
		if got := s.read(rel); got != want {
			t.Errorf("%s changed: %q", rel, got)
		}
	}
	golden(t, "tree-after-end.txt", tree(t, filepath.Join(s.project, ".nexus")))
}

// checkStep asserts what individual steps must do, independently of the goldens.
func checkStep(t *testing.T, s *sessionEnv, name, out string) {
	t.Helper()
	deny := func(capability string) {
		var r struct {
			HookSpecificOutput struct {
				HookEventName            string
				PermissionDecision       string
				PermissionDecisionReason string
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v (%q)", name, err, out)
		}
		h := r.HookSpecificOutput
		if h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, capability) {
			t.Errorf("%s: want a denial naming %s, got %+v", name, capability, h)
		}
	}
	switch {
	case strings.HasSuffix(name, "SessionStart-lead"):
		if !strings.Contains(out, "additionalContext") || s.read(".nexus/.gitignore") != "state/\n" || s.read(".nexus/state/nexus/agent-tracker.json") != "[]\n" {
			t.Errorf("%s: tree, .gitignore or tracker not set up", name)
		}
		if state.Exists(filepath.Join(s.project, ".nexus/state/agent-tracker.json")) {
			t.Errorf("%s: legacy tracker not removed", name)
		}
	case strings.HasSuffix(name, "UserPromptSubmit-plan"):
		if !strings.Contains(out, "nexus activated the nx-plan skill") {
			t.Errorf("%s: nx-plan body not injected", name)
		}
	case strings.Contains(name, "architect-edit-denied"), strings.Contains(name, "architect-bash-write-denied"):
		deny("no_file_edit")
	case strings.Contains(name, "engineer-task_add-denied"):
		deny("no_task_create")
	case strings.Contains(name, "PreToolUse"):
		if strings.TrimSpace(out) != "" {
			t.Errorf("%s: an allowed call got output %q", name, out)
		}
	case strings.HasSuffix(name, "UserPromptSubmit-decide"):
		p, _, err := state.New(mustLayout(t, s.project), nil).ReadPlan()
		if err != nil || p.Issues[0].Status != state.IssueDecided || p.Issues[0].Decision == nil || *p.Issues[0].Decision != "LRU with a 5-minute TTL, 256 entries" {
			t.Errorf("%s: decision not recorded: %+v %v", name, p, err)
		}
	case strings.HasSuffix(name, "UserPromptSubmit-rule"):
		if got := s.read(".nexus/rules/testing.md"); got != "<!-- tags: testing -->\n\nrun go test with -race before committing\n" {
			t.Errorf("%s: rule file %q", name, got)
		}
	case strings.HasSuffix(name, "SessionStart-compact"):
		for _, want := range []string{"Active skill: nx-plan", "issue #1 decided", "task #1 pending", "architect, agent id a7c3e91f: completed", "pattern-http-caching.md"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: compaction context lacks %q", name, want)
			}
		}
	}
}

func mustLayout(t *testing.T, project string) state.Layout {
	l, err := state.NewLayout(project, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// tree lists the files under dir (lock sidecars included: they are part of
// what a session leaves behind).
func tree(t *testing.T, dir string) string {
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n") + "\n"
}
