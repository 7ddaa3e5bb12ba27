package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const validPlan = `{"id": 1, "topic": "t", "issues": [{"id": 1, "title": "a", "status": "pending"}], "created_at": "2026-04-13T00:00:00.000Z"}`

func validCycle() map[string]any {
	return map[string]any{"schema_version": "0.5", "completed_at": "2026-04-13T00:00:00.000Z", "branch": "main", "plan": nil, "tasks": []any{}}
}

func fakeTools(t *testing.T) map[string]fakeTool {
	return map[string]fakeTool{
		"echo": func(_ Project, params map[string]any) (map[string]any, error) { return params, nil },
		"noop": func(Project, map[string]any) (map[string]any, error) { return map[string]any{}, nil },
		"plan_start": func(p Project, params map[string]any) (map[string]any, error) {
			var plan map[string]any
			_ = json.Unmarshal([]byte(validPlan), &plan)
			plan["topic"] = params["topic"]
			writeJSON(t, p, ".nexus/state/plan.json", plan)
			return map[string]any{"created": true, "plan_id": 1, "topic": params["topic"]}, nil
		},
		"bad_plan": func(p Project, _ map[string]any) (map[string]any, error) {
			writeJSON(t, p, ".nexus/state/plan.json", map[string]any{"id": 1, "topic": "t", "issues": []any{}})
			return map[string]any{"ok": true}, nil
		},
		"fail": func(Project, map[string]any) (map[string]any, error) {
			return nil, &ToolError{Message: "No active plan session"}
		},
		"crash": func(Project, map[string]any) (map[string]any, error) {
			return nil, errors.New("connection reset")
		},
		"read_plan": func(p Project, _ map[string]any) (map[string]any, error) {
			return map[string]any{"plan": readJSON(t, p, ".nexus/state/plan.json")}, nil
		},
		"append_cycle": func(p Project, params map[string]any) (map[string]any, error) {
			h := readJSON(t, p, ".nexus/history.json")
			if h == nil {
				h = map[string]any{"cycles": []any{}}
			}
			c := validCycle()
			if params["bad"] == true {
				delete(c, "schema_version")
			}
			h["cycles"] = append(h["cycles"].([]any), c)
			if params["rewrite"] == true {
				h["cycles"].([]any)[0].(map[string]any)["branch"] = "rewritten"
			}
			if params["drop"] == true {
				h["cycles"] = h["cycles"].([]any)[2:]
			}
			writeJSON(t, p, ".nexus/history.json", h)
			return map[string]any{"total_cycles": len(h["cycles"].([]any))}, nil
		},
		"task_add": func(p Project, params map[string]any) (map[string]any, error) {
			tasks := readJSON(t, p, ".nexus/state/tasks.json")
			if tasks == nil {
				tasks = map[string]any{"goal": "", "decisions": []any{}, "tasks": []any{}}
			}
			list := tasks["tasks"].([]any)
			task := map[string]any{"id": len(list) + 1, "title": params["title"], "context": "c", "status": "pending", "deps": []any{}}
			if params["status"] != nil {
				task["status"] = params["status"]
			}
			tasks["tasks"] = append(list, task)
			writeJSON(t, p, ".nexus/state/tasks.json", tasks)
			return map[string]any{"task": task}, nil
		},
		"bad_tracker": func(p Project, _ map[string]any) (map[string]any, error) {
			writeJSON(t, p, ".nexus/state/other/agent-tracker.json", []any{map[string]any{"harness_id": "other"}})
			return map[string]any{}, nil
		},
		"bad_memory_line": func(p Project, _ map[string]any) (map[string]any, error) {
			path := filepath.Join(p.Dir, ".nexus/state/x/memory-access.jsonl")
			_ = os.MkdirAll(filepath.Dir(path), 0o755)
			line := `{"path":"/m.md","last_accessed_ts":"2026-04-13T00:00:00Z","access_count":1,"last_agent":"a"}`
			_ = os.WriteFile(path, []byte(line+"\n"+`{"path":"/n.md","access_count":1.5}`+"\n"), 0o644)
			return map[string]any{}, nil
		},
	}
}

func fakeEvents(t *testing.T) map[string]fakeTool {
	return map[string]fakeTool{
		"agent_spawn": func(p Project, params map[string]any) (map[string]any, error) {
			rel := ".nexus/state/" + p.HarnessID + "/agent-tracker.json"
			var list []any
			if b, err := os.ReadFile(filepath.Join(p.Dir, rel)); err == nil {
				_ = json.Unmarshal(b, &list)
			}
			list = append(list, map[string]any{"harness_id": p.HarnessID, "agent_id": params["agent_id"], "started_at": "2026-04-13T00:00:00.000Z", "status": "running"})
			writeJSON(t, p, rel, list)
			return nil, nil
		},
		"agent_complete": func(Project, map[string]any) (map[string]any, error) {
			return nil, &ToolError{Message: "agent uuid-x not found"}
		},
	}
}

// fixture builds a fixture document with defaults for the required keys.
func fixture(id string, body string) string {
	return fmt.Sprintf(`{"test_id": %q, "description": "a test fixture for the runner", "covers": {"return_value": {"x": ["y"]}}, %s}`, id, body)
}

func runFixtures(t *testing.T, f *fakeFactory, docs ...string) []*Result {
	t.Helper()
	return runFixturesWith(t, f, docs...)
}

func runFixturesWith(t *testing.T, f Factory, docs ...string) []*Result {
	t.Helper()
	dir := t.TempDir()
	body := "[" + strings.Join(docs, ",") + "]"
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	suite, err := Load(testSchemas(t), osSource(dir, "t", false))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(Options{Factory: f, Schemas: testSchemas(t), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), suite.Cases, nil)
}

func failureText(r *Result) string {
	var parts []string
	for _, f := range r.Failures {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "\n")
}

func TestRunnerVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status Status
		want   []string // substrings of the failure text (FAIL) or notes (PASS)
	}{
		{
			name:   "literal and matcher assertions hold",
			body:   `"action": {"tool": "plan_start", "params": {"topic": "x"}}, "postcondition": {"return_value": {"$.created": true, "$.plan_id": {"type": "number", "min": 1}, "$.topic": "x", "$.missing": null}, "state_files": {".nexus/state/plan.json": {"$.issues.length": 1, "$.created_at": {"type": "iso8601"}, "$.issues[-1].decision": null}}}`,
			status: Pass,
		},
		{
			name:   "wrong expected value fails with path, expected and actual",
			body:   `"action": {"tool": "plan_start", "params": {"topic": "x"}}, "postcondition": {"return_value": {"$.topic": "y", "$.plan_id": 2}}`,
			status: Fail,
			want:   []string{`return $.topic: expected "y", got "x"`, `return $.plan_id: expected 2, got 1`},
		},
		{
			name:   "state file assertion fails",
			body:   `"action": {"tool": "plan_start", "params": {"topic": "x"}}, "postcondition": {"state_files": {".nexus/state/plan.json": {"$.issues.length": 2}}}`,
			status: Fail,
			want:   []string{`.nexus/state/plan.json $.issues.length: expected 2, got 1`},
		},
		{
			name:   "unknown matcher key fails loudly without calling the harness",
			body:   `"action": {"tool": "crash", "params": {}}, "postcondition": {"return_value": {"$.x": {"type": "string", "maxLength": 3}}}`,
			status: Fail,
			want:   []string{`fixture: `, `unknown key "maxLength"`},
		},
		{
			name:   "unknown matcher type fails the fixture schema check",
			body:   `"action": {"tool": "noop", "params": {}}, "postcondition": {"return_value": {"$.x": {"type": "uuid"}}}`,
			status: Fail,
			want:   []string{`fixture: fixture does not match conformance/schema/fixture.schema.json`},
		},
		{
			name:   "unknown placeholder fails loudly",
			body:   `"action": {"tool": "noop", "params": {}}, "postcondition": {"state_files": {"{STATE_DIR}/plan.json": null}}`,
			status: Fail,
			want:   []string{`unknown placeholder {STATE_DIR}`},
		},
		{
			name:   "a path leaving the project is refused",
			body:   `"action": {"tool": "noop", "params": {}}, "postcondition": {"state_files": {"../escape.json": null}}`,
			status: Fail,
			want:   []string{`must be relative to the project root and stay inside it`},
		},
		{
			name:   "expected error but the call succeeded",
			body:   `"action": {"tool": "noop", "params": {}}, "postcondition": {"error": true}`,
			status: Fail,
			want:   []string{`error: expected an error, got {}`},
		},
		{
			name:   "unexpected error",
			body:   `"action": {"tool": "fail", "params": {}}, "postcondition": {"return_value": {"$.x": 1}}`,
			status: Fail,
			want:   []string{`error: expected success, got error "No active plan session"`},
		},
		{
			name:   "a call without postcondition must not fail",
			body:   `"action": {"tool": "fail", "params": {}}`,
			status: Fail,
			want:   []string{`expected success`},
		},
		{
			name:   "error: true, error_contains and exact $.error hold",
			body:   `"action": {"tool": "fail", "params": {}}, "postcondition": {"error": true, "error_contains": "active plan", "return_value": {"$.error": "No active plan session"}, "state_files": {".nexus/state/plan.json": null}}`,
			status: Pass,
		},
		{
			name:   "$.error alone means an error is expected",
			body:   `"action": {"tool": "noop", "params": {}}, "postcondition": {"return_value": {"$.error": "No active plan session"}}`,
			status: Fail,
			want:   []string{`expected an error`},
		},
		{
			name:   "error_contains mismatch",
			body:   `"action": {"tool": "fail", "params": {}}, "postcondition": {"error_contains": "Issue 999 not found"}`,
			status: Fail,
			want:   []string{`error: expected a message containing "Issue 999 not found", got "No active plan session"`},
		},
		{
			name:   "exact $.error mismatch",
			body:   `"action": {"tool": "fail", "params": {}}, "postcondition": {"return_value": {"$.error": "No active plan"}}`,
			status: Fail,
			want:   []string{`return $.error: expected "No active plan", got "No active plan session"`},
		},
		{
			name:   "a target failure is not an expected error",
			body:   `"action": {"tool": "crash", "params": {}}, "postcondition": {"error": true}`,
			status: Fail,
			want:   []string{`target: crash: connection reset`},
		},
		{
			name:   "schema violation fails although every assertion holds",
			body:   `"action": {"tool": "bad_plan", "params": {}}, "postcondition": {"return_value": {"$.ok": true}}`,
			status: Fail,
			want:   []string{`schema .nexus/state/plan.json: `, `created_at`},
		},
		{
			name:   "every harness namespace is schema-checked",
			body:   `"action": {"tool": "bad_tracker", "params": {}}, "postcondition": {"return_value": {}}`,
			status: Fail,
			want:   []string{`schema .nexus/state/other/agent-tracker.json: `, `started_at`},
		},
		{
			name:   "memory-access lines are schema-checked one by one",
			body:   `"action": {"tool": "bad_memory_line", "params": {}}`,
			status: Fail,
			want:   []string{`schema .nexus/state/x/memory-access.jsonl: line 2: `},
		},
		{
			name:   "precondition content the harness did not touch is not schema-checked",
			body:   `"precondition": {"state_files": {".nexus/state/plan.json": {}, ".nexus/state/tasks.json": {"goal": ""}}}, "action": {"tool": "noop", "params": {}}, "postcondition": {"state_files": {".nexus/state/plan.json": {}}}`,
			status: Pass,
		},
		{
			name:   "C9: legacy cycles from the precondition are skipped, appended ones checked",
			body:   `"precondition": {"state_files": {".nexus/history.json": {"cycles": [{"completed_at": "2026-01-01T00:00:00Z", "branch": "main", "plan": null, "tasks": []}]}}}, "action": {"tool": "append_cycle", "params": {}}, "postcondition": {"return_value": {"$.total_cycles": 2}, "state_files": {".nexus/history.json": {"$.cycles[-1].schema_version": "0.5", "$.cycles[0].schema_version": null}}}`,
			status: Pass,
			want:   []string{`upstream deviation C9 tolerated: the 1 history cycle(s)`},
		},
		{
			name:   "an appended cycle without schema_version fails",
			body:   `"precondition": {"state_files": {".nexus/history.json": {"cycles": [{"completed_at": "2026-01-01T00:00:00Z", "branch": "main", "plan": null, "tasks": []}]}}}, "action": {"tool": "append_cycle", "params": {"bad": true}}, "postcondition": {"return_value": {"$.total_cycles": 2}}`,
			status: Fail,
			want:   []string{`schema .nexus/history.json: /cycles/0: missing property 'schema_version'`},
		},
		{
			name:   "history is append-only",
			body:   `"precondition": {"state_files": {".nexus/history.json": {"cycles": [{"completed_at": "2026-01-01T00:00:00Z", "branch": "main", "plan": null, "tasks": []}]}}}, "action": {"tool": "append_cycle", "params": {"rewrite": true}}, "postcondition": {"return_value": {"$.total_cycles": 2}}`,
			status: Fail,
			want:   []string{`history is append-only, but the call changed cycle 0`},
		},
		{
			name:   "C7: an empty initial goal is tolerated and noted",
			body:   `"action": {"tool": "task_add", "params": {"title": "a"}}, "postcondition": {"state_files": {".nexus/state/tasks.json": {"$.goal": ""}}}`,
			status: Pass,
			want:   []string{`upstream deviation C7 tolerated`},
		},
		{
			name:   "C7 tolerates only the goal",
			body:   `"action": {"tool": "task_add", "params": {"title": "a", "status": "blocked"}}`,
			status: Fail,
			want:   []string{`schema .nexus/state/tasks.json: /tasks/0/status`},
		},
		{
			name:   "preconditions: null deletes, {} creates, content is written",
			body:   `"precondition": {"state_files": {".nexus/state/plan.json": ` + validPlan + `, ".nexus/state/artifacts/a.md": {}, ".nexus/state/artifacts/b.md": null}}, "action": {"tool": "read_plan", "params": {}}, "postcondition": {"return_value": {"$.plan.id": 1, "$.plan.issues[0].title": "a"}, "state_files": {".nexus/state/artifacts/a.md": {}, ".nexus/state/artifacts/b.md": null}}`,
			status: Pass,
		},
		{
			name:   "steps share the project and stop at the first failing step",
			body:   `"steps": [{"action": {"tool": "task_add", "params": {"title": "a"}}, "assert_return": {"$.task.id": 1}}, {"description": "second", "action": {"tool": "task_add", "params": {"title": "b"}}, "assert_return": {"$.task.id": 3}}, {"action": {"tool": "crash", "params": {}}}]`,
			status: Fail,
			want:   []string{`step 2: return $.task.id: expected 3, got 2`},
		},
		{
			name:   "a step can expect an error with $.error",
			body:   `"steps": [{"action": {"tool": "fail", "params": {}}, "assert_return": {"$.error": "No active plan session"}}, {"action": {"tool": "plan_start", "params": {"topic": "z"}}, "assert_state": {".nexus/state/plan.json": {"$.topic": "z"}}}], "postcondition": {"return_value": {"$.created": true}}`,
			status: Pass,
		},
		{
			name:   "an unexpected error in a step fails that step",
			body:   `"steps": [{"action": {"tool": "noop", "params": {}}}, {"action": {"tool": "fail", "params": {}}}]`,
			status: Fail,
			want:   []string{`step 2: error: expected success`},
		},
		{
			name:   "step state assertions",
			body:   `"steps": [{"action": {"tool": "noop", "params": {}}, "assert_state": {".nexus/state/plan.json": {"$.id": 1}}}]`,
			status: Fail,
			want:   []string{`step 1: .nexus/state/plan.json: expected the file to exist, got no file`},
		},
		{
			name:   "events write in the event's harness namespace",
			body:   `"precondition": {"state_files": {"{STATE_ROOT}/{HARNESS_ID}/agent-tracker.json": []}}, "event": {"type": "agent_spawn", "params": {"harness_id": "my-harness", "agent_id": "a1"}}, "postcondition": {"state_files": {"{STATE_ROOT}/{HARNESS_ID}/agent-tracker.json": {"$.length": 1, "$[0].harness_id": "my-harness"}, ".nexus/state/my-harness/agent-tracker.json": {}}}`,
			status: Pass,
			want:   []string{`upstream deviation C8 tolerated`},
		},
		{
			name:   "events default to the runner's harness id",
			body:   `"event": {"type": "agent_spawn", "params": {"agent_id": "a1"}}, "postcondition": {"state_files": {".nexus/state/claude-nexus/agent-tracker.json": {"$[0].agent_id": "a1"}}}`,
			status: Pass,
		},
		{
			name:   "event errors are checked like tool errors",
			body:   `"event": {"type": "agent_complete", "params": {"agent_id": "x"}}, "postcondition": {"error_contains": "not found"}`,
			status: Pass,
		},
		{
			name:   "an event step can expect an error with $.error",
			body:   `"steps": [{"event": {"type": "agent_complete", "params": {"agent_id": "x"}}, "assert_return": {"$.error": "agent uuid-x not found"}}, {"event": {"type": "agent_spawn", "params": {"agent_id": "a"}}, "assert_return": {"$.error": null}}]`,
			status: Pass,
		},
		{
			name:   "an event returns nothing but {}",
			body:   `"steps": [{"event": {"type": "agent_spawn", "params": {"agent_id": "a"}}, "assert_return": {"$.x": 1}}]`,
			status: Fail,
			want:   []string{`step 1: return $.x: expected 1, got <absent>`},
		},
		{
			name:   "unknown event type fails the fixture",
			body:   `"event": {"type": "agent_pause", "params": {}}`,
			status: Fail,
			want:   []string{`fixture: fixture does not match`},
		},
	}
	var docs []string
	for i, tt := range tests {
		docs = append(docs, fixture(fmt.Sprintf("case_%02d", i), tt.body))
	}
	f := &fakeFactory{tools: fakeTools(t), events: fakeEvents(t)}
	results := runFixtures(t, f, docs...)
	if len(results) != len(tests) {
		t.Fatalf("%d results for %d fixtures", len(results), len(tests))
	}
	for i, tt := range tests {
		r := results[i]
		t.Run(tt.name, func(t *testing.T) {
			text := failureText(r)
			if r.Status != tt.status {
				t.Fatalf("status %s, want %s\nfailures:\n%s\nnotes: %v", r.Status, tt.status, text, r.Notes)
			}
			hay := text
			if r.Status == Pass {
				hay = strings.Join(r.Notes, "\n")
			}
			for _, w := range tt.want {
				if !strings.Contains(hay, w) {
					t.Errorf("%q not found in:\n%s", w, hay)
				}
			}
		})
	}
}

func TestRunnerSkipsEventsForTargetsWithoutThem(t *testing.T) {
	f := &fakeFactory{tools: fakeTools(t), noEvents: "no hooks here"}
	results := runFixtures(t, f,
		fixture("ev", `"event": {"type": "agent_spawn", "params": {}}`),
		fixture("steps_with_event", `"steps": [{"action": {"tool": "noop", "params": {}}}, {"event": {"type": "agent_spawn"}}]`),
		fixture("tool", `"action": {"tool": "noop", "params": {}}`),
	)
	want := []Status{Skip, Skip, Pass}
	for i, r := range results {
		if r.Status != want[i] {
			t.Errorf("%s: status %s, want %s", r.ID, r.Status, want[i])
		}
	}
	if results[0].SkipReason != "no hooks here" {
		t.Errorf("skip reason %q", results[0].SkipReason)
	}
	if len(f.projects) != 1 {
		t.Errorf("skipped cases must not start a target; %d were started", len(f.projects))
	}
}

func TestRunnerIsolatesCases(t *testing.T) {
	f := &fakeFactory{tools: fakeTools(t)}
	var docs []string
	for i := 0; i < 12; i++ {
		// Each case adds one task; ids stay 1 only if projects are fresh.
		docs = append(docs, fixture(fmt.Sprintf("iso_%02d", i), `"action": {"tool": "task_add", "params": {"title": "a"}}, "postcondition": {"return_value": {"$.task.id": 1}}`))
	}
	results := runFixtures(t, f, docs...)
	seen := map[string]bool{}
	for i, r := range results {
		if r.Status != Pass {
			t.Errorf("%s: %s", r.ID, failureText(r))
		}
		if want := fmt.Sprintf("iso_%02d", i); r.ID != want {
			t.Errorf("result %d is %s, want %s (order must follow the cases)", i, r.ID, want)
		}
	}
	for _, p := range f.projects {
		if seen[p.Dir] {
			t.Errorf("project %s reused", p.Dir)
		}
		seen[p.Dir] = true
		if p.NexusDir != filepath.Join(p.Dir, ".nexus") || p.HarnessID != DefaultHarnessID {
			t.Errorf("project %+v", p)
		}
		if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
			t.Errorf("scratch project %s was not removed", p.Dir)
		}
	}
}

func TestRunEmitsInOrder(t *testing.T) {
	// Later cases finish first; emission must still follow case order.
	var cases []*Case
	for i := 0; i < 8; i++ {
		cases = append(cases, &Case{ID: fmt.Sprintf("c%d", i), Fixture: &Fixture{TestID: "x", Action: &Action{Tool: "sleep", Params: json.RawMessage(fmt.Sprintf(`{"ms": %d}`, (8-i)*3))}}})
	}
	f := &fakeFactory{tools: map[string]fakeTool{"sleep": func(_ Project, p map[string]any) (map[string]any, error) {
		time.Sleep(time.Duration(p["ms"].(float64)) * time.Millisecond)
		return map[string]any{}, nil
	}}}
	r, err := NewRunner(Options{Factory: f, Schemas: testSchemas(t), Workers: 4, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	r.Run(context.Background(), cases, func(res *Result) { order = append(order, res.ID) })
	if got := strings.Join(order, ","); got != "c0,c1,c2,c3,c4,c5,c6,c7" {
		t.Fatalf("emitted %s", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.json":      "[" + fixture("one", `"action": {"tool": "noop", "params": {}}`) + "," + fixture("two", `"action": {"tool": "noop", "params": {}}`) + "]",
		"b.json":      fixture("three", `"action": {"tool": "noop", "params": {}}`),
		"c.json":      fixture("one", `"action": {"tool": "noop", "params": {}}`),
		"d.json":      "not json",
		"e.json":      `[{"test_id": "bad_shape", "description": "missing covers and action"}]`,
		"f.json":      fixture("both", `"action": {"tool": "noop", "params": {}}, "event": {"type": "agent_spawn"}`),
		"ignored.txt": "{}",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	suite, err := Load(testSchemas(t), osSource(dir, "x", false), osSource(filepath.Join(dir, "missing"), "scenarios", true))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range suite.Cases {
		s := c.ID + "@" + c.Source
		if c.Err != nil {
			s += "!"
		}
		got = append(got, s)
	}
	want := "one@x/a.json two@x/a.json three@x/b.json one@x/c.json! d@x/d.json! bad_shape@x/e.json! both@x/f.json!"
	if strings.Join(got, " ") != want {
		t.Fatalf("cases:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
	if len(suite.Notes) != 1 || !strings.Contains(suite.Notes[0], "no scenarios/ fixtures") {
		t.Fatalf("notes %v", suite.Notes)
	}
	if _, err := Load(testSchemas(t), osSource(filepath.Join(dir, "missing"), "tools", false)); err == nil {
		t.Fatal("a missing required source must be an error")
	}
	if _, err := Load(testSchemas(t), osSource(t.TempDir(), "empty", false)); err == nil {
		t.Fatal("no fixtures at all must be an error")
	}
}

func TestScratchDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if got := ScratchDir(); got != dir {
		t.Errorf("with TMPDIR set, ScratchDir() = %s, want %s", got, dir)
	}
	t.Setenv("TMPDIR", "")
	got := ScratchDir()
	if st, err := os.Stat(got); err != nil || !st.IsDir() {
		t.Errorf("ScratchDir() = %s, not a directory", got)
	}
}
