package codex

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// fakeMemory records the memory reads the engine reports.
type fakeMemory struct{ calls []string }

func (m *fakeMemory) Observe(_ context.Context, path, agent string, at time.Time) error {
	m.calls = append(m.calls, fmt.Sprintf("observe %s by %s", path, agent))
	return nil
}

// ReadsOf finds reads as the real memory manager does (memory.ReadPaths),
// keeping those under .nexus/memory.
func (m *fakeMemory) ReadsOf(tool string, input []byte, cwd string) []string {
	var out []string
	for _, p := range memory.ReadPaths(tool, input, cwd) {
		if strings.Contains(p, "/.nexus/memory/") {
			out = append(out, p)
		}
	}
	return out
}

func (m *fakeMemory) SaveFromTag(context.Context, string) (string, error) { return "saved", nil }
func (m *fakeMemory) GCFromTag(context.Context, string) (string, error)   { return "gc", nil }
func (m *fakeMemory) AutoGC(context.Context) (string, error)              { return "", nil }

// replay is one project driven through Codex hook invocations, each with a
// fresh engine as a separate `nexus hook --host codex` process builds it.
type replay struct {
	t       *testing.T
	project string
	core    *vocabulary.Core
	schemas *schema.Set
	mem     *fakeMemory
	now     time.Time
}

func newReplay(t *testing.T) *replay {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	return &replay{t: t, project: dir, core: core, schemas: schema.NewCoreSet(core.Dir), mem: &fakeMemory{}, now: time.Date(2026, 11, 27, 5, 2, 8, 0, time.UTC)}
}

func (s *replay) harness() *harness.Engine {
	he, err := harness.New(harness.Options{
		Project: s.project, HarnessID: HarnessID, Core: s.core, Schemas: s.schemas, Gate: gate.Options{ToolPrefix: "nx_"},
		Now: func() time.Time { return s.now }, Branch: func() string { return "main" },
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return he
}

func (s *replay) hook(payload []byte) (string, string) {
	engine := func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
		he := s.harness()
		return lifecycle.New(lifecycle.Options{
			Store: he.Store, Core: he.Core, ToolPrefix: "nx_", Host: Host{}.Profile(host.Env{Project: s.project}),
			Tools: he, ToolClasses: he.ToolClasses(), Memory: s.mem, Now: func() time.Time { return s.now },
		}), nil
	}
	var out, errb bytes.Buffer
	r := host.Runner{Codec: Host{}.Codec(), Engine: engine, Policy: func() string { return "fail-open" }, Stderr: &errb}
	if code := r.Run(context.Background(), bytes.NewReader(payload), &out); code != 0 {
		s.t.Fatalf("exit code %d", code)
	}
	return out.String(), errb.String()
}

func (s *replay) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(s.project, rel))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *replay) tracker() []state.TrackerEntry {
	var entries []state.TrackerEntry
	if err := json.Unmarshal([]byte(s.read(".nexus/state/codex/agent-tracker.json")), &entries); err != nil {
		s.t.Fatal(err)
	}
	return entries
}

func entry(entries []state.TrackerEntry, role string) state.TrackerEntry {
	for _, e := range entries {
		if e.AgentName == role {
			return e
		}
	}
	return state.TrackerEntry{}
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

// Payloads returns a recorded session's payloads (testdata/session, from
// Codex 0.169.0 with logging hooks), with the project path filled in.
func payloads(t *testing.T, project string) (names []string, data [][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "session", "[0-9][0-9]-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	sort.Strings(files)
	projJSON, _ := json.Marshal(project)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
		data = append(data, []byte(strings.ReplaceAll(string(raw), "{{PROJECT}}", strings.Trim(string(projJSON), `"`))))
	}
	return names, data
}

// TestRecordedSession replays a Codex 0.169.0 session recorded with
// logging hooks: Lead adds a task (the MCP call runs between its
// PreToolUse and PostToolUse), spawns an architect and an engineer, the
// architect reads memory with cat and tries apply_patch and a shell
// redirect (nexus denies both; their PostToolUse payloads, which a denied
// call never gets, were dropped from the recording), the engineer applies
// a patch and an apply_patch heredoc (which Codex reports to no
// PostToolUse), Lead resumes the engineer with send_input (its
// UserPromptSubmit alone shows it) and the session ends. Replies go to a
// golden; the tracker is checked at every step that changes it.
func TestRecordedSession(t *testing.T) {
	s := newReplay(t)
	for rel, content := range map[string]string{".nexus/memory/pattern-http-caching.md": "# HTTP caching\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(s.project, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.project, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names, data := payloads(t, s.project)
	var replies strings.Builder
	for i, name := range names {
		s.now = s.now.Add(time.Second)
		if strings.HasPrefix(name[3:], "PostToolUse-lead-nx_task_add") {
			// The MCP server's side: the tool runs before its PostToolUse.
			var p struct {
				ToolInput map[string]any `json:"tool_input"`
			}
			if err := json.Unmarshal(data[i], &p); err != nil {
				t.Fatal(err)
			}
			if _, err := s.harness().CallTool(context.Background(), "task_add", p.ToolInput); err != nil {
				t.Fatal(err)
			}
		}
		out, errOut := s.hook(data[i])
		if errOut != "" {
			t.Errorf("%s: stderr %q", name, errOut)
		}
		fmt.Fprintf(&replies, "== %s ==\n%s", name, strings.ReplaceAll(pretty(out), s.project, "{{PROJECT}}"))
		step(t, s, name[3:], string(data[i]), out)
	}
	golden(t, "session/golden/replies.txt", []byte(replies.String()))
	if got := strings.Join(s.mem.calls, "\n"); got != "observe "+filepath.Join(s.project, ".nexus/memory/pattern-http-caching.md")+" by 01a21b61-deb0-7801-9188-0ef9b6f64882" {
		t.Errorf("memory reads: %q", got)
	}
	for _, gone := range []string{"state/codex/agent-tracker.json", "state/codex/tool-log.jsonl"} {
		if state.Exists(filepath.Join(s.project, ".nexus", gone)) {
			t.Errorf(".nexus/%s survived session end", gone)
		}
	}
}

// step asserts what one recorded event must do.
func step(t *testing.T, s *replay, name, payload, out string) {
	t.Helper()
	var r struct {
		HookSpecificOutput struct {
			HookEventName, PermissionDecision, PermissionDecisionReason, AdditionalContext string
		}
	}
	if out != "" {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v (%q)", name, err, out)
		}
	}
	h := r.HookSpecificOutput
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(name+": "+format, args...)
		}
	}
	switch name {
	case "SessionStart-lead":
		check(strings.Contains(h.AdditionalContext, "harness id codex") && strings.Contains(h.AdditionalContext, "spawn_agent"), "context %.200q", h.AdditionalContext)
	case "UserPromptSubmit-lead":
		// [plan]: nx-plan is longer than Codex's 10,000 bytes, and it is not
		// installed here: the body is clipped with how to install it.
		check(strings.Contains(h.AdditionalContext, "nexus activated the nx-plan skill") && len(h.AdditionalContext) <= MaxContextBytes, "context %d bytes", len(h.AdditionalContext))
	case "PreToolUse-architect-apply_patch", "PreToolUse-architect-Bash":
		if strings.Contains(payload, "cat .nexus/memory") {
			check(out == "", "the architect's memory read got %q", out)
			break
		}
		check(h.PermissionDecision == "deny" && strings.Contains(h.PermissionDecisionReason, "no_file_edit"), "want a no_file_edit denial, got %+v", h)
	case "SubagentStart-architect", "SubagentStart-engineer":
		role := strings.TrimPrefix(name, "SubagentStart-")
		check(strings.Contains(h.AdditionalContext, "nexus: you are the "+role+" agent"), "brief %.200q", h.AdditionalContext)
		e := entry(s.tracker(), role)
		check(e.Status == state.AgentRunning && e.HarnessID == HarnessID, "tracker %+v", e)
	case "PreToolUse-engineer-Bash":
		// The heredoc Codex applies itself: allowed, and logged now.
		check(out == "", "the engineer's heredoc got %q", out)
		check(strings.Contains(s.read(".nexus/state/codex/tool-log.jsonl"), `"file":"src/lru.go"`), "the heredoc's file is not in the tool log")
	case "SubagentStop-engineer":
		e := entry(s.tracker(), "engineer")
		check(e.Status == state.AgentCompleted && strings.Join(e.FilesTouched, ",") == "src/cache.go,src/lru.go", "tracker %+v", e)
	case "UserPromptSubmit-engineer":
		e := entry(s.tracker(), "engineer")
		check(e.Status == state.AgentRunning, "tracker %+v", e)
		if e.ResumeCount != nil && *e.ResumeCount == 1 {
			check(strings.Contains(h.AdditionalContext, "You are being resumed"), "resume context %.200q", h.AdditionalContext)
		} else {
			check(out == "", "a first message got %q", out)
		}
	case "SubagentStop-architect":
		e := entry(s.tracker(), "architect")
		check(e.Status == state.AgentCompleted && len(e.FilesTouched) == 0, "tracker %+v", e)
	case "PostToolUse-lead-wait_agent":
		var entries []state.TrackerEntry
		_ = json.Unmarshal([]byte(s.read(".nexus/state/codex/agent-tracker.json")), &entries)
		var v any
		_ = json.Unmarshal([]byte(s.read(".nexus/state/codex/agent-tracker.json")), &v)
		probs, err := s.schemas.Validate(schema.StateTracker, v)
		check(err == nil && len(probs) == 0, "tracker does not match the schema: %v %v", probs, err)
	}
	if name == "SubagentStop-engineer" {
		if e := entry(s.tracker(), "engineer"); e.ResumeCount != nil && *e.ResumeCount == 1 {
			check(e.Status == state.AgentCompleted, "after the resume: %+v", e)
		}
	}
}
