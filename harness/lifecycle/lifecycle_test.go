package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

var (
	testCore    *vocabulary.Core
	testSchemas *schema.Set
)

func core(t testing.TB) (*vocabulary.Core, *schema.Set) {
	t.Helper()
	if testCore == nil {
		c, err := vocabulary.LoadManifest(testenv.CoreDir(t))
		if err != nil {
			t.Fatal(err)
		}
		testCore, testSchemas = c, schema.NewCoreSet(c.Dir)
	}
	return testCore, testSchemas
}

var t0 = time.Date(2026, 4, 16, 8, 52, 55, 250_000_000, time.UTC)

func newStore(t testing.TB, harnessID string) *state.Store {
	t.Helper()
	_, sch := core(t)
	l, err := state.NewLayout(t.TempDir(), harnessID)
	if err != nil {
		t.Fatal(err)
	}
	s := state.New(l, sch)
	s.Now = func() time.Time { return t0 }
	return s
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceLifecycleFixtures runs the distribution's lifecycle
// fixtures through AgentSpawn / AgentComplete / AgentResume (FixtureEvent)
// and checks their postconditions with a small evaluator for the path forms
// they use.
func TestConformanceLifecycleFixtures(t *testing.T) {
	c, sch := core(t)
	files, _ := filepath.Glob(filepath.Join(c.Dir, "conformance", "lifecycle", "*.json"))
	if len(files) != 3 {
		t.Fatalf("found %d lifecycle fixtures, want 3", len(files))
	}
	for _, f := range files {
		var fx struct {
			TestID       string
			Precondition struct {
				StateFiles map[string]json.RawMessage `json:"state_files"`
			}
			Event struct {
				Type   string
				Params map[string]any
			}
			Postcondition struct {
				StateFiles map[string]map[string]json.RawMessage `json:"state_files"`
			}
		}
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatal(err)
		}
		t.Run(fx.TestID, func(t *testing.T) {
			id := "claude-nexus"
			if h, ok := fx.Event.Params["harness_id"].(string); ok {
				id = h
			}
			s := newStore(t, id)
			for k, v := range fx.Precondition.StateFiles {
				p := strings.NewReplacer("{STATE_ROOT}", s.L.StateDir(), "{HARNESS_ID}", id).Replace(k)
				writeJSON(t, p, v)
			}
			if err := fixtureEvent(context.Background(), s, fx.Event.Type, fx.Event.Params); err != nil {
				t.Fatal(err)
			}
			for k, asserts := range fx.Postcondition.StateFiles {
				p := strings.NewReplacer("{STATE_ROOT}", s.L.StateDir(), "{HARNESS_ID}", id).Replace(k)
				raw, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var doc any
				if err := json.Unmarshal(raw, &doc); err != nil {
					t.Fatal(err)
				}
				if ps, err := sch.Validate(schema.StateTracker, doc); err != nil || len(ps) > 0 {
					t.Errorf("tracker invalid: %v %v", err, ps)
				}
				for path, want := range asserts {
					got, ok := evalPath(doc, path)
					if !ok {
						t.Errorf("%s: no value", path)
						continue
					}
					var w any
					_ = json.Unmarshal(want, &w)
					if m, isMatcher := w.(map[string]any); isMatcher {
						if m["type"] == "iso8601" {
							if s, ok := got.(string); !ok || !isoPattern.MatchString(s) {
								t.Errorf("%s = %v, want an ISO 8601 timestamp", path, got)
							}
						}
						continue
					}
					if fmt.Sprint(got) != fmt.Sprint(w) {
						t.Errorf("%s = %v, want %v", path, got, w)
					}
				}
			}
		})
	}
}

var isoPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// evalPath evaluates the JSONPath forms of the lifecycle fixtures:
// $.length, $[i].field, $[i].field.length, $[i].field[j].
func evalPath(doc any, path string) (any, bool) {
	cur := doc
	rest := strings.TrimPrefix(path, "$")
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".length"):
			arr, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			cur = float64(len(arr))
			rest = strings.TrimPrefix(rest, ".length")
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:end])
			arr, ok := cur.([]any)
			if err != nil || !ok || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
			rest = rest[end+1:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[rest[:end]]; !ok {
				return nil, false
			}
			rest = rest[end:]
		default:
			return nil, false
		}
	}
	return cur, true
}

func TestFixtureEventErrors(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, "claude-nexus")
	for _, tt := range []struct {
		typ    string
		params map[string]any
		want   string
	}{
		{FixtureSpawn, map[string]any{"harness_id": "claude-nexus", "agent_name": "architect"}, "agent_id is required"},
		{FixtureSpawn, map[string]any{"harness_id": "other", "agent_name": "architect", "agent_id": "x"}, "does not match this harness's namespace"},
		{FixtureSpawn, map[string]any{"agent_id": 3}, "cannot unmarshal number"},
		{FixtureSpawn, map[string]any{"agent_id": "x", "task_id": "t"}, "unknown field"},
		{FixtureComplete, map[string]any{"agent_id": "nobody"}, "not in agent-tracker.json"},
		{FixtureComplete, map[string]any{"agent_id": "x", "files_touched": "a.go"}, "cannot unmarshal string"},
		{FixtureResume, map[string]any{"agent_id": "nobody"}, "not in agent-tracker.json"},
		{"agent_vanish", map[string]any{}, "unknown lifecycle fixture event"},
	} {
		err := fixtureEvent(ctx, s, tt.typ, tt.params)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: err %v, want %q", tt.typ, tt.params, err, tt.want)
		}
	}
	if state.Exists(s.L.TrackerPath()) {
		t.Error("a failed event wrote the tracker")
	}
}

func TestTrackerLifecycle(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, "nexus")
	if _, err := AgentSpawn(ctx, s, SpawnParams{AgentName: "myplugin:engineer", AgentID: "e1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := AgentSpawn(ctx, s, SpawnParams{AgentName: "Explore", AgentID: "x1"}); err != nil {
		t.Fatal(err)
	}
	// Tool log: e1 writes two files (one twice), reads one, fails one write.
	for _, l := range []ToolLogLine{
		{TS: "t", AgentID: "e1", Tool: "Edit", File: "src/a.go", Status: StatusOK, Writes: true},
		{TS: "t", AgentID: "e1", Tool: "Read", File: "src/b.go", Status: StatusOK},
		{TS: "t", AgentID: "e1", Tool: "Bash", File: "out/x", Files: []string{"out/x", "out/y"}, Status: StatusOK, Writes: true},
		{TS: "t", AgentID: "e1", Tool: "Edit", File: "src/a.go", Status: StatusOK, Writes: true},
		{TS: "t", AgentID: "e1", Tool: "Write", File: "src/c.go", Status: StatusError, Writes: true},
		{TS: "t", AgentID: "x1", Tool: "Write", File: "other.go", Status: StatusOK, Writes: true},
	} {
		if err := s.AppendLine(ctx, s.L.ToolLogPath(), l); err != nil {
			t.Fatal(err)
		}
	}
	e, err := AgentComplete(ctx, s, CompleteParams{AgentID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(e.FilesTouched, ",") != "src/a.go,out/x,out/y" {
		t.Errorf("files_touched %v", e.FilesTouched)
	}
	if e.LastMessage != nil {
		t.Errorf("last_message set without one given: %q", *e.LastMessage)
	}
	e, err = AgentResume(ctx, s, ResumeParams{AgentID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != state.AgentRunning || *e.ResumeCount != 1 || e.LastResumedAt == "" || e.StoppedAt == "" {
		t.Errorf("after resume: %+v", e)
	}
	entries, _, err := s.ReadTracker()
	if err != nil {
		t.Fatal(err)
	}
	if entries[0].AgentName != "engineer" || entries[1].AgentName != "explore" {
		t.Errorf("agent names %q %q", entries[0].AgentName, entries[1].AgentName)
	}
	// A corrupt tracker is never overwritten.
	if err := os.WriteFile(s.L.TrackerPath(), []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = AgentSpawn(ctx, s, SpawnParams{AgentID: "z"})
	var ce *state.CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("spawn over a corrupt tracker: %v", err)
	}
	if b, _ := os.ReadFile(s.L.TrackerPath()); string(b) != "[{" {
		t.Errorf("corrupt tracker rewritten: %q", b)
	}
}

func TestBareRole(t *testing.T) {
	for in, want := range map[string]string{
		"architect": "architect", "plugin:architect": "architect", "a:b:reviewer": "reviewer",
		"Explore": "explore", "general-purpose": "general-purpose", "My Agent": "my-agent",
		"": "", ":": "", "123": "", "日本": "",
	} {
		if got := BareRole(in); got != want {
			t.Errorf("BareRole(%q) = %q, want %q", in, got, want)
		}
	}
}

// --- engine -----------------------------------------------------------------

type fakeTools struct {
	calls []string
	res   map[string]any
	err   error
}

func (f *fakeTools) CallTool(_ context.Context, name string, args map[string]any) (map[string]any, error) {
	b, _ := json.Marshal(args)
	f.calls = append(f.calls, name+" "+string(b))
	return f.res, f.err
}

type recMemory struct{ calls []string }

func (m *recMemory) Observe(_ context.Context, path, agent string, _ time.Time) error {
	m.calls = append(m.calls, "observe "+filepath.Base(path)+" "+agent)
	return nil
}
func (m *recMemory) SaveFromTag(_ context.Context, text string) (string, error) {
	m.calls = append(m.calls, "save "+text)
	return "saved to .nexus/memory/x.md", nil
}
func (m *recMemory) GCFromTag(_ context.Context, text string) (string, error) {
	m.calls = append(m.calls, "gc "+text)
	return "", errors.New("not a git repository")
}
func (m *recMemory) AutoGC(context.Context) (string, error) {
	m.calls = append(m.calls, "autogc")
	return "auto gc: nothing to delete", nil
}

// testMap is a host's capability map for the tests: tools named like
// Claude Code's, so the cases read like sessions.
var testMap = func() *gate.Map {
	m, err := gate.ParseMap("test", []byte(`host: test
tools:
  Write: {classes: [file_creation, file_modification], file_params: [file_path]}
  Edit: {classes: [partial_file_edit, file_modification], file_params: [file_path]}
  MultiEdit: {classes: [partial_file_edit, file_modification], file_params: [file_path]}
  Bash: {classes: [shell_command_exec, subprocess_spawn], shell: {param: command, dialect: posix}}
  Read: {classes: [file_read], file_params: [file_path]}
  Agent: {classes: [subagent_spawn]}
  Task: {classes: [subagent_spawn]}
  Skill: {classes: [skill_activation]}
`))
	if err != nil {
		panic(err)
	}
	return m
}()

// testHost is a host as the tests need it: testMap, nexus's tools named
// mcp__nexus__nx_*, roles spawned with the Agent tool (plugin names when
// agentPrefix is set).
func testHost(agentPrefix, toolPrefix string) HostProfile {
	if toolPrefix == "" {
		toolPrefix = "mcp__nexus__"
	}
	spawn := "with the Agent tool, subagent_type = the role id"
	if agentPrefix != "" {
		spawn = fmt.Sprintf("with the Agent tool, subagent_type = %s<role id> (for example %sarchitect)", agentPrefix, agentPrefix)
	}
	return HostProfile{Name: "test", Map: testMap, ToolPrefix: toolPrefix, AgentPrefix: agentPrefix, SpawnRoles: spawn, ToolNames: true,
		InstallHint: "run `nexus install test` in the project"}
}

func newEngine(t testing.TB, o Options) (*Engine, *state.Store) {
	t.Helper()
	c, _ := core(t)
	if o.Store == nil {
		o.Store = newStore(t, "nexus")
	}
	o.Core = c
	if o.ToolPrefix == "" {
		o.ToolPrefix = "nx_" // the default mcp.tool_prefix
	}
	return New(o), o.Store
}

func handle(t *testing.T, e *Engine, ev Event) Reply {
	t.Helper()
	r, err := e.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: %v", ev.Name, err)
	}
	return r
}

func putPlan(t *testing.T, s *state.Store, issues ...string) {
	t.Helper()
	p := &state.Plan{ID: 3, Topic: "cache", CreatedAt: state.Format(t0)}
	for i, title := range issues {
		p.Issues = append(p.Issues, state.Issue{ID: int64(i + 1), Title: title, Status: state.IssuePending})
	}
	if err := s.Update(context.Background(), []string{s.L.PlanPath()}, func(tx *state.Tx) error { return tx.PutPlan(p) }); err != nil {
		t.Fatal(err)
	}
}

func TestSessionStartAndEnd(t *testing.T) {
	mem := &recMemory{}
	dir := t.TempDir()
	_, sch := core(t)
	l, _ := state.NewLayout(dir, "nexus")
	s := state.New(l, sch)
	e, _ := newEngine(t, Options{Store: s, MemoryAutoGC: true, Memory: mem, Host: testHost("", "")})
	if err := os.MkdirAll(s.L.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.L.LegacyTrackerPath(), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	putPlan(t, s, "eviction", "size")
	r := handle(t, e, Event{Name: SessionStart, Source: "startup"})
	for _, want := range []string{"nexus is active", "[rule:NAME]", "[plan:auto]", "plan.json from an earlier session", "mcp__nexus__nx_task_close"} {
		if !strings.Contains(r.Context, want) {
			t.Errorf("session start context lacks %q:\n%s", want, r.Context)
		}
	}
	if r.Notice == "" {
		t.Error("the stale plan warning is not shown to the user")
	}
	if b, _ := os.ReadFile(s.L.TrackerPath()); string(b) != "[]\n" {
		t.Errorf("tracker %q", b)
	}
	if state.Exists(s.L.LegacyTrackerPath()) {
		t.Error("legacy tracker kept")
	}
	if b, _ := os.ReadFile(s.L.GitignorePath()); string(b) != "state/\n" {
		t.Errorf(".gitignore %q", b)
	}
	// A .gitignore that does not ignore state/ is left alone, with a warning.
	if err := os.WriteFile(s.L.GitignorePath(), []byte("*.tmp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = handle(t, e, Event{Name: SessionStart})
	if !strings.Contains(r.Context, "does not ignore state/") {
		t.Errorf("no .gitignore warning: %s", r.Context)
	}

	// Session end.
	for _, f := range []string{s.L.EditTrackerPath(), s.L.ReopenTrackerPath(), s.L.ToolLogPath()} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := map[string]string{
		s.L.HistoryPath():                         `{"cycles":[]}`,
		filepath.Join(s.L.MemoryDir(), "m.md"):    "m",
		filepath.Join(s.L.ContextDir(), "c.md"):   "c",
		filepath.Join(s.L.RulesDir(), "r.md"):     "r",
		filepath.Join(s.L.ArtifactsDir(), "a.md"): "a",
	}
	for p, c := range keep {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = handle(t, e, Event{Name: SessionEnd})
	if !strings.Contains(r.Notice, "plan.json is still open") || !strings.Contains(r.Notice, "auto gc: nothing to delete") {
		t.Errorf("session end notice %q", r.Notice)
	}
	for _, f := range []string{s.L.TrackerPath(), s.L.EditTrackerPath(), s.L.ReopenTrackerPath(), s.L.ToolLogPath()} {
		if state.Exists(f) {
			t.Errorf("%s survived session end", f)
		}
	}
	for p, c := range keep {
		if b, err := os.ReadFile(p); err != nil || string(b) != c {
			t.Errorf("%s touched at session end: %q %v", p, b, err)
		}
	}
	if !state.Exists(s.L.PlanPath()) {
		t.Error("session end deleted plan.json (it must only warn)")
	}
	if strings.Join(mem.calls, ",") != "autogc" {
		t.Errorf("memory calls %v", mem.calls)
	}
}

func TestUserMessageActions(t *testing.T) {
	ctx := context.Background()
	tools := &fakeTools{res: map[string]any{"decided": true, "issue": "eviction", "allComplete": false, "remaining": []any{map[string]any{"id": 2}}}}
	mem := &recMemory{}
	e, s := newEngine(t, Options{Tools: tools, Memory: mem})

	r := handle(t, e, Event{Name: UserMessage, Prompt: "[d] use LRU"})
	if !strings.Contains(r.Context, "No active plan session") || len(tools.calls) != 0 {
		t.Errorf("[d] without a plan: %q %v", r.Context, tools.calls)
	}
	putPlan(t, s, "eviction", "size")
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[d] use LRU"})
	if !strings.Contains(r.Context, `2 issues are open (#1 "eviction", #2 "size")`) || len(tools.calls) != 0 {
		t.Errorf("[d] with two open issues: %q %v", r.Context, tools.calls)
	}
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[d] #2: 256 entries"})
	if len(tools.calls) != 1 || tools.calls[0] != `plan_decide {"decision":"256 entries","issue_id":2}` {
		t.Errorf("explicit issue: calls %v", tools.calls)
	}
	if !strings.Contains(r.Context, `recorded the decision on issue #2 "size"`) || !strings.Contains(r.Context, "1 issue(s) remain") {
		t.Errorf("reply %q", r.Context)
	}
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[d] issue 9 nope"})
	if !strings.Contains(r.Context, "Issue 9 not found") {
		t.Errorf("unknown issue: %q", r.Context)
	}
	tools.err = errors.New("Issue 1 not found")
	putPlan(t, s, "only one")
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[d] single"})
	if !strings.Contains(r.Context, "did not record the decision: Issue 1 not found") {
		t.Errorf("tool error: %q", r.Context)
	}
	if tools.calls[len(tools.calls)-1] != `plan_decide {"decision":"single","issue_id":1}` {
		t.Errorf("single pending issue not chosen: %v", tools.calls)
	}

	// [rule:NAME] writes (then appends), [rule] derives a name, bad names refuse.
	handle(t, e, Event{Name: UserMessage, Prompt: "[rule:testing] use -race"})
	handle(t, e, Event{Name: UserMessage, Prompt: "[rule:testing] no sleeps in tests"})
	if b, _ := os.ReadFile(filepath.Join(s.L.RulesDir(), "testing.md")); string(b) != "<!-- tags: testing -->\n\nuse -race\n\nno sleeps in tests\n" {
		t.Errorf("rules/testing.md = %q", b)
	}
	handle(t, e, Event{Name: UserMessage, Prompt: "[rule] Always run gofmt before a commit!"})
	if b, err := os.ReadFile(filepath.Join(s.L.RulesDir(), "always-run-gofmt-before-a.md")); err != nil || string(b) != "Always run gofmt before a commit!\n" {
		t.Errorf("derived rule file: %q %v", b, err)
	}
	for _, bad := range []string{"[rule:../escape] x", "[rule:Upper] x", "[rule:a/b] x", "[rule:x]"} {
		r = handle(t, e, Event{Name: UserMessage, Prompt: bad})
		if !strings.Contains(r.Context, "did not store the rule") {
			t.Errorf("%s: %q", bad, r.Context)
		}
	}
	if ents, _ := os.ReadDir(s.L.RulesDir()); len(ents) != 2 {
		t.Errorf("rules dir has %d files", len(ents))
	}

	// Memory actions go to the handler; without one they say memory is off.
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[m] the CI box has 2 cores [m:gc] old"})
	if strings.Join(mem.calls, "|") != "save the CI box has 2 cores|gc old" {
		t.Errorf("memory calls %v", mem.calls)
	}
	if !strings.Contains(r.Context, "saved to .nexus/memory/x.md") || !strings.Contains(r.Context, "could not carry out [m:gc]: not a git repository") {
		t.Errorf("memory replies %q", r.Context)
	}
	e2, _ := newEngine(t, Options{})
	r = handle(t, e2, Event{Name: UserMessage, Prompt: "[m] x"})
	if !strings.Contains(r.Context, "memory features are off") {
		t.Errorf("nil memory: %q", r.Context)
	}
	if r := handle(t, e2, Event{Name: SessionStart}); !strings.Contains(r.Context, "Memory features are off") {
		t.Errorf("session start does not say memory is off: %q", r.Context)
	}

	// No tag and no open cycle: nothing to add.
	if r := handle(t, e2, Event{Name: UserMessage, Prompt: "hello `[plan]`"}); !r.Empty() {
		t.Errorf("plain message got %+v", r)
	}
	_ = ctx
}

func TestSkillActivationAndCompaction(t *testing.T) {
	e, s := newEngine(t, Options{Host: testHost("", "")})
	r := handle(t, e, Event{Name: UserMessage, Prompt: "[plan:auto] caching"})
	if !strings.Contains(r.Context, "nexus activated the nx-plan skill in auto mode") {
		t.Errorf("skill not injected: %.200s", r.Context)
	}
	a, ok := e.readActiveSkill()
	if !ok || a.Skill != "nx-plan" || a.Mode != "auto" || a.Tag != "[plan:auto]" {
		t.Errorf("active skill %+v", a)
	}
	if _, err := AgentSpawn(context.Background(), s, SpawnParams{AgentName: "architect", AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	r = handle(t, e, Event{Name: ContextCompact})
	for _, want := range []string{"Active skill: nx-plan (mode auto)", "Plan: none", "Tasks: none", "architect, agent id a1: running", "resume tier persistent", "nexus activated the nx-plan skill"} {
		if !strings.Contains(r.Context, want) {
			t.Errorf("compaction lacks %q", want)
		}
	}
	// A later skill tag replaces the active one.
	handle(t, e, Event{Name: UserMessage, Prompt: "[sync]"})
	if a, _ := e.readActiveSkill(); a.Skill != "nx-sync" {
		t.Errorf("active skill %+v", a)
	}
}

func TestSpawnBriefingAndResume(t *testing.T) {
	ctx := context.Background()
	e, s := newEngine(t, Options{Host: testHost("", "")})
	owner, accept := "engineer", "tests pass"
	tasks := &state.Tasks{Goal: "g", Tasks: []state.Task{
		{ID: 1, Title: "done", Context: "c", Status: state.TaskCompleted, Owner: &owner},
		{ID: 2, Title: "Add cache", Context: "the client", Status: state.TaskInProgress, Owner: &owner, Acceptance: &accept},
	}}
	if err := s.Update(ctx, []string{s.L.TasksPath()}, func(tx *state.Tx) error { return tx.PutTasks(tasks) }); err != nil {
		t.Fatal(err)
	}
	r := handle(t, e, Event{Name: SubagentSpawn, AgentID: "e1", AgentType: "nexus:engineer"})
	for _, want := range []string{"you are the engineer agent", "resume tier bounded", "no_task_create", "mcp__nexus__nx_task_add", "TASK: Add cache (task #2, in_progress)", "CONTEXT: the client", "ACCEPTANCE: tests pass"} {
		if !strings.Contains(r.Context, want) {
			t.Errorf("briefing lacks %q:\n%s", want, r.Context)
		}
	}
	if strings.Contains(r.Context, "APPROACH:") {
		t.Error("an absent section is shown")
	}
	handle(t, e, Event{Name: SubagentComplete, AgentID: "e1", AgentType: "nexus:engineer"})
	// The host starts the same instance again: a resume, not a new entry.
	r = handle(t, e, Event{Name: SubagentSpawn, AgentID: "e1", AgentType: "nexus:engineer"})
	if !strings.Contains(r.Context, "re-read your target files") {
		t.Errorf("bounded resume without the re-read directive:\n%s", r.Context)
	}
	entries, _, _ := s.ReadTracker()
	if len(entries) != 1 || *entries[0].ResumeCount != 1 || entries[0].Status != state.AgentRunning {
		t.Errorf("tracker after resume %+v", entries)
	}
	// subagent_resume of an unknown instance starts tracking it.
	handle(t, e, Event{Name: SubagentResume, AgentID: "r9", AgentType: "reviewer"})
	// Completing an instance nexus never saw records it anyway.
	msg := "done"
	handle(t, e, Event{Name: SubagentComplete, AgentID: "z9", AgentType: "tester", LastMessage: &msg})
	entries, _, _ = s.ReadTracker()
	if len(entries) != 3 || entries[2].AgentID != "z9" || entries[2].Status != state.AgentCompleted || *entries[2].LastMessage != "done" {
		t.Errorf("tracker %+v", entries)
	}
	// Lead has no capabilities; a non-manifest role says so.
	r = handle(t, e, Event{Name: SubagentSpawn, AgentID: "g1", AgentType: "general-purpose"})
	if !strings.Contains(r.Context, "not a nexus-core role") || strings.Contains(r.Context, "nexus denies") {
		t.Errorf("general-purpose briefing:\n%s", r.Context)
	}
}

func TestToolCalls(t *testing.T) {
	mem := &recMemory{}
	e, s := newEngine(t, Options{Host: testHost("", ""), Memory: mem})
	memFile := filepath.Join(s.L.MemoryDir(), "pattern-x.md")
	if err := os.MkdirAll(s.L.MemoryDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(memFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := handle(t, e, Event{Name: PreToolUse, AgentID: "a1", AgentType: "architect", Tool: "Write", ToolInput: map[string]any{"file_path": "notes.md"}})
	if r.Decision != "deny" || !strings.Contains(r.Reason, "no_file_edit") {
		t.Errorf("architect write: %+v", r)
	}
	r = handle(t, e, Event{Name: PreToolUse, Tool: "Edit", ToolInput: map[string]any{"file_path": "src/a.go"}})
	if r.Decision != "deny" || !strings.Contains(r.Reason, "planned task cycle") {
		t.Errorf("Lead unplanned edit: %+v", r)
	}
	handle(t, e, Event{Name: PostToolUse, AgentID: "a1", AgentType: "architect", Tool: "Read", ToolInput: map[string]any{"file_path": memFile}})
	handle(t, e, Event{Name: PostToolUse, Tool: "Read", ToolInput: map[string]any{"file_path": ".nexus/memory/pattern-x.md"}})
	handle(t, e, Event{Name: PostToolUse, Tool: "Read", ToolInput: map[string]any{"file_path": "README.md"}})
	handle(t, e, Event{Name: PostToolUse, Tool: "Read", Status: StatusError, Error: "no such file", ToolInput: map[string]any{"file_path": memFile}})
	handle(t, e, Event{Name: PostToolUse, Tool: "Write", ToolInput: map[string]any{"file_path": filepath.Join(s.L.MemoryDir(), "new.md")}})
	if strings.Join(mem.calls, "|") != "observe pattern-x.md a1|observe pattern-x.md lead" {
		t.Errorf("observations %v (only successful reads under .nexus/memory/ count)", mem.calls)
	}
	lines, _ := state.ReadLines(s.L.ToolLogPath())
	if len(lines) != 7 {
		t.Fatalf("%d tool-log lines", len(lines))
	}
	var first, failed ToolLogLine
	_ = json.Unmarshal(lines[0], &first)
	_ = json.Unmarshal(lines[5], &failed)
	if first.Status != StatusDenied || first.File != "notes.md" || !first.Writes || first.Agent != "architect" {
		t.Errorf("denied line %+v", first)
	}
	if failed.Status != StatusError || failed.Error != "no such file" || failed.File != ".nexus/memory/pattern-x.md" {
		t.Errorf("failed line %+v", failed)
	}
}

func TestEventValidation(t *testing.T) {
	e, _ := newEngine(t, Options{})
	for _, tt := range []struct {
		ev   Event
		want string
	}{
		{Event{}, "event is required"},
		{Event{Name: "teleport"}, "unknown event"},
		{Event{Name: PreToolUse}, "field tool is required"},
		{Event{Name: PostToolUse, Tool: "Read", Status: "maybe"}, "must be ok or error"},
		{Event{Name: SubagentSpawn}, "field agent_id is required"},
		{Event{Name: FixtureComplete}, "field agent_id is required"},
	} {
		if _, err := e.Handle(context.Background(), tt.ev); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err %v, want %q", tt.ev, err, tt.want)
		}
	}
	if r, err := e.Handle(context.Background(), Event{Name: Ignore}); err != nil || !r.Empty() {
		t.Errorf("ignore: %+v %v", r, err)
	}
}

func TestExplain(t *testing.T) {
	_, s := newEngine(t, Options{})
	putPlan(t, s, "eviction")
	if _, _, err := New(Options{Store: s, Core: func() *vocabulary.Core { c, _ := core(t); return c }()}).Explain(context.Background(), "[m] x"); !errors.Is(err, ErrNotDryRun) {
		t.Fatalf("Explain on a store that writes: %v", err)
	}
	e, _ := newEngine(t, Options{Store: s.DryRun()})
	xs, _, err := e.Explain(context.Background(), "[plan] a `[run]` [d] LRU [rule:testing] r [zz] [run]")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range xs {
		got = append(got, x.String())
	}
	want := []string{
		"[plan] at byte 0: ignored, replaced by the later skill tag [run] (one skill is active at a time)",
		"[run] at byte 10: ignored, inside inline code",
		`[d] at byte 17: inline action d (handler nx_plan_decide): nexus cannot record decisions in this setup; record it with nx_plan_decide (issue_id 1).`,
		"[rule:testing] at byte 25: inline action rule (handler rule_store): nexus saved the rule to .nexus/rules/testing.md.",
		"[zz] at byte 42: ignored, no tag [zz] in vocabulary/tags.yml",
		"[run] at byte 47: skill tag run, injects skills/nx-run/body.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("explain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if state.Exists(filepath.Join(s.L.RulesDir(), "testing.md")) {
		t.Error("explain carried out an action")
	}
}
