package tools_test

import (
	"context"
	"testing"
)

func TestTaskAdd(t *testing.T) {
	full := map[string]any{
		"title": "Write fixtures", "context": "Cover every tool", "deps": []any{}, "approach": "table", "acceptance": "all pass", "risk": "none",
	}
	runCases(t, []toolCase{{
		name: "first task creates tasks.json", tool: "task_add", args: full,
		want: map[string]any{"$.task": map[string]any{
			"id": 1, "title": "Write fixtures", "context": "Cover every tool", "approach": "table", "acceptance": "all pass", "risk": "none",
			"status": "pending", "deps": []any{}, "created_at": fixedStamp,
		}},
		state: map[string]map[string]any{tasksPath: {
			"$.schema_version": "0.5", "$.goal": "", "$.decisions": []any{}, "$.tasks.length": 1,
			"$.tasks[0].approach": "table", "$.tasks[0].created_at": fixedStamp, "$.tasks[0].owner": absent,
		}},
	}, {
		name: "goal replaces, decisions append, ids continue", tool: "task_add",
		pre:  files{tasksPath: taskFile("Existing goal", []string{"old"}, task(1, "one", "completed"), task(4, "four", "pending"))},
		args: map[string]any{"title": "next", "context": "c", "deps": []any{1}, "goal": "New goal", "decisions": []any{"Use Go"}},
		want: map[string]any{"$.task.id": 5, "$.task.deps": []any{1}},
		state: map[string]map[string]any{tasksPath: {
			"$.goal": "New goal", "$.decisions": []any{"old", "Use Go"}, "$.tasks.length": 3, "$.tasks[2].deps[0]": 1,
		}},
	}, {
		name: "owner fields and plan_issue", tool: "task_add",
		args:  map[string]any{"title": "t", "context": "c", "owner": "engineer", "owner_agent_id": "uuid-eng01", "owner_reuse_policy": "resume_if_same_artifact", "plan_issue": 2},
		want:  map[string]any{"$.task.owner": "engineer", "$.task.owner_agent_id": "uuid-eng01", "$.task.owner_reuse_policy": "resume_if_same_artifact", "$.task.plan_issue": 2, "$.task.deps": []any{}},
		state: map[string]map[string]any{tasksPath: {"$.tasks[0].owner": "engineer", "$.tasks[0].plan_issue": 2}},
	}, {
		name: "numbers as strings", tool: "task_add",
		args: map[string]any{"title": "t", "context": "c", "deps": []any{"1", " 2 "}, "plan_issue": "3"},
		want: map[string]any{"$.task.deps": []any{1, 2}, "$.task.plan_issue": 3},
	}, {
		name: "deps as JSON text", tool: "task_add",
		args: map[string]any{"title": "t", "context": "c", "deps": "[1, 2]"},
		want: map[string]any{"$.task.deps": []any{1, 2}},
	}, {
		name: "missing context", tool: "task_add", args: map[string]any{"title": "t"},
		errHas: `missing required parameter "context"`, state: map[string]map[string]any{tasksPath: nil},
	}, {
		name: "bad reuse policy", tool: "task_add", args: map[string]any{"title": "t", "context": "c", "owner_reuse_policy": "sometimes"},
		errHas: `parameter "owner_reuse_policy" must be one of "fresh", "resume_if_same_artifact", "resume", got "sometimes"`,
	}, {
		name: "non-numeric string dep", tool: "task_add", args: map[string]any{"title": "t", "context": "c", "deps": []any{"one"}},
		errHas: `parameter "deps[0]" must be an integer, got string`,
	}, {
		name: "unknown parameter names the accepted ones", tool: "task_add", args: map[string]any{"title": "t", "context": "c", "priority": 1},
		errHas: `unknown parameter "priority" (this tool takes: acceptance, approach, context, decisions, deps, goal, owner, owner_agent_id, owner_reuse_policy, plan_issue, risk, title)`,
	}})
}

func TestTaskList(t *testing.T) {
	runCases(t, []toolCase{{
		name: "no tasks file", tool: "task_list", want: map[string]any{"$.exists": false, "$.tasks": absent},
	}, {
		name: "summary and ready", tool: "task_list",
		pre: files{tasksPath: taskFile("Ship", nil,
			task(1, "a", "completed"), task(2, "b", "pending", 1), task(3, "c", "pending", 1),
			task(4, "d", "in_progress"), task(5, "e", "pending", 4), task(6, "f", "pending", 99))},
		want: map[string]any{
			"$.goal": "Ship", "$.tasks.length": 6, "$.tasks[1]": task(2, "b", "pending", 1),
			"$.summary": map[string]any{"total": 6, "completed": 1, "pending": 4, "blocked": 1, "ready": []any{2, 3}},
		},
	}, {
		name: "empty goal is readable", tool: "task_list", pre: files{tasksPath: taskFile("", nil, task(1, "a", "pending"))},
		want: map[string]any{"$.goal": "", "$.summary.ready": []any{1}},
	}})
}

func TestTaskUpdate(t *testing.T) {
	one := taskFile("g", nil, task(1, "Only", "pending"))
	runCases(t, []toolCase{{
		name: "to in_progress", tool: "task_update", pre: files{tasksPath: one},
		args:  map[string]any{"id": 1, "status": "in_progress"},
		want:  map[string]any{"$.task": task(1, "Only", "in_progress")},
		state: map[string]map[string]any{tasksPath: {"$.tasks[0].status": "in_progress"}},
	}, {
		name: "completed back to pending", tool: "task_update", pre: files{tasksPath: taskFile("g", nil, task(1, "Only", "completed"))},
		args: map[string]any{"id": "1", "status": "pending"}, want: map[string]any{"$.task.status": "pending"},
	}, {
		name: "not found", tool: "task_update", pre: files{tasksPath: one},
		args: map[string]any{"id": 99, "status": "completed"}, err: "Task id 99 not found",
	}, {
		name: "no tasks file", tool: "task_update", args: map[string]any{"id": 1, "status": "completed"},
		err: "tasks.json not found", state: map[string]map[string]any{tasksPath: nil},
	}, {
		name: "bad status", tool: "task_update", pre: files{tasksPath: one},
		args: map[string]any{"id": 1, "status": "done"}, errHas: `parameter "status" must be one of "pending", "in_progress", "completed", got "done"`,
	}, {
		name: "missing id", tool: "task_update", pre: files{tasksPath: one},
		args: map[string]any{"status": "done"}, errHas: `missing required parameter "id"`,
	}})
}

func TestTaskClose(t *testing.T) {
	decided := issue(1, "Format", "decided")
	decided["decision"] = "JSON"
	rich := task(1, "Build", "completed", 2)
	for k, v := range map[string]any{"approach": "a", "acceptance": "b", "risk": "c", "plan_issue": 1, "owner": "engineer", "owner_agent_id": "uuid-1", "owner_reuse_policy": "fresh", "created_at": "2026-04-14T00:00:00.000Z"} {
		rich[k] = v
	}
	plan := onePlan(3, decided, issue(2, "Scope", "pending"))
	plan["schema_version"] = "0.5"
	runCases(t, []toolCase{{
		name: "archives plan and tasks", tool: "task_close",
		pre: files{planPath: plan, tasksPath: taskFile("Ship it", []string{"d1"}, rich, task(2, "Min", "pending")), ".nexus/state/artifacts/keep.md": "x", ".nexus/state/nexus/edit-tracker.json": "[]"},
		want: map[string]any{
			"$.closed": true, "$.cycle": fixedStamp, "$.branch": "main",
			"$.archived": map[string]any{"plan": true, "decisions": 1, "tasks": 2},
			"$.deleted":  []any{"plan.json", "tasks.json"}, "$.total_cycles": 1,
			"$.memoryHint": map[string]any{"taskCount": 2, "decisionCount": 1, "cycleTopics": []any{"Refactor state layer", "Ship it"}},
		},
		state: map[string]map[string]any{
			planPath: nil, tasksPath: nil, ".nexus/state/artifacts/keep.md": {}, ".nexus/state/nexus/edit-tracker.json": {},
			historyPath: {
				"$.schema_version": "0.5", "$.cycles.length": 1, "$.cycles[0].schema_version": "0.5",
				"$.cycles[0].completed_at": fixedStamp, "$.cycles[0].branch": "main",
				"$.cycles[0].plan.schema_version": absent, "$.cycles[0].plan.issues[0].decision": "JSON",
				"$.cycles[0].tasks[0]": rich, "$.cycles[0].tasks[1]": task(2, "Min", "pending"),
				"$.cycles[0].memoryHint": absent,
			},
		},
	}, {
		name: "nothing to close still records a cycle", tool: "task_close",
		want:  map[string]any{"$.archived": map[string]any{"plan": false, "decisions": 0, "tasks": 0}, "$.deleted": []any{}, "$.total_cycles": 1, "$.memoryHint.cycleTopics": []any{}},
		state: map[string]map[string]any{historyPath: {"$.cycles[0].plan": nil, "$.cycles[0].tasks": []any{}}},
	}, {
		name: "tasks only; empty goal is not a topic", tool: "task_close",
		pre:  files{tasksPath: taskFile("", nil, task(1, "a", "pending"))},
		want: map[string]any{"$.deleted": []any{"tasks.json"}, "$.memoryHint.cycleTopics": []any{}, "$.archived.tasks": 1},
	}, {
		name: "parameters refused", tool: "task_close", args: map[string]any{"force": true},
		errHas: `unknown parameter "force"`, state: map[string]map[string]any{historyPath: nil},
	}})
}

func TestTaskCloseKeepsPastCyclesAndCallsHook(t *testing.T) {
	e, proj := newEngine(t)
	// A legacy cycle with odd spacing, escapes and number spellings must
	// come back byte-equivalent (whitespace aside).
	legacy := `{"completed_at":"2025-01-01T00:00:00Z","branch":"old","plan":null,"tasks":[],"x":"\u00e9<&>","n":1.50}`
	putFiles(t, proj, files{historyPath: `{"cycles":[` + legacy + `]}`})
	calls := 0
	e.Env().OnTaskClose = func(context.Context) { calls++ }
	if _, msg := call(t, e, "task_close", nil); msg != "" {
		t.Fatal(msg)
	}
	if calls != 1 {
		t.Fatalf("OnTaskClose ran %d times, want 1", calls)
	}
	h := readJSON(t, proj+"/"+historyPath)
	check(t, "history", h, map[string]any{"$.cycles.length": 2, "$.cycles[0].x": "é<&>", "$.cycles[1].branch": "main"})
	raw := string(mustRead(t, proj+"/"+historyPath))
	for _, want := range []string{`"\u00e9<&>"`, `1.50`} {
		if !contains(raw, want) {
			t.Errorf("history.json lost %s of the legacy cycle:\n%s", want, raw)
		}
	}
	// A failing call does not run the hook.
	putFiles(t, proj, files{tasksPath: "[]"})
	if _, err := e.CallTool(t.Context(), "task_close", nil); err == nil {
		t.Fatal("task_close over a corrupt tasks.json succeeded")
	}
	if calls != 1 {
		t.Fatalf("OnTaskClose ran after a failed close")
	}
}

func TestBranchIsNeverEmpty(t *testing.T) {
	e, _ := newEngine(t)
	e.Env().Branch = func() string { return "" }
	res, msg := call(t, e, "task_close", nil)
	if msg != "" || res["branch"] != "unknown" {
		t.Fatalf("branch = %v (%s), want unknown", res["branch"], msg)
	}
	res, _ = call(t, e, "context", nil)
	if res["branch"] != "unknown" {
		t.Fatalf("context branch = %v", res["branch"])
	}
}
