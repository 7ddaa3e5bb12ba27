package tools_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestPlanStart(t *testing.T) {
	args := map[string]any{
		"topic":            "Introduce fixtures",
		"issues":           []any{"Format?", "Which tools?"},
		"research_summary": "Reviewed the state schemas.",
	}
	runCases(t, []toolCase{{
		name: "creates plan.json",
		tool: "plan_start", args: args,
		want: map[string]any{"$.created": true, "$.plan_id": 1, "$.topic": "Introduce fixtures", "$.issueCount": 2, "$.previousArchived": false},
		state: map[string]map[string]any{
			planPath: {
				"$.schema_version": "0.5", "$.id": 1, "$.topic": "Introduce fixtures",
				"$.issues[0]": issue(1, "Format?", "pending"), "$.issues[1]": issue(2, "Which tools?", "pending"),
				"$.research_summary": "Reviewed the state schemas.", "$.created_at": fixedStamp,
			},
			historyPath: nil,
		},
	}, {
		name: "archives an active plan and counts its id",
		tool: "plan_start", args: args,
		pre: files{
			planPath:    map[string]any{"schema_version": "0.5", "id": 7, "topic": "old", "issues": []any{issue(1, "a", "pending")}, "created_at": "2026-04-13T00:00:00.000Z"},
			historyPath: map[string]any{"cycles": []any{map[string]any{"completed_at": "2026-01-01T00:00:00Z", "branch": "x", "plan": onePlan(3), "tasks": []any{}}}},
		},
		want: map[string]any{"$.plan_id": 8, "$.previousArchived": true},
		state: map[string]map[string]any{
			planPath: {"$.id": 8, "$.topic": "Introduce fixtures"},
			historyPath: {
				"$.cycles.length": 2, "$.cycles[0].schema_version": absent,
				"$.cycles[1].schema_version": "0.5", "$.cycles[1].completed_at": fixedStamp, "$.cycles[1].branch": "main",
				"$.cycles[1].plan.id": 7, "$.cycles[1].plan.topic": "old",
				"$.cycles[1].plan.schema_version": absent, "$.cycles[1].tasks.length": 0,
			},
		},
	}, {
		name: "next id comes from history",
		tool: "plan_start", args: args,
		pre:  files{historyPath: map[string]any{"cycles": []any{map[string]any{"completed_at": "2026-01-01T00:00:00Z", "branch": "x", "plan": onePlan(41), "tasks": []any{}}, map[string]any{"completed_at": "2026-01-02T00:00:00Z", "branch": "x", "plan": nil, "tasks": []any{}}}}},
		want: map[string]any{"$.plan_id": 42, "$.previousArchived": false},
	}, {
		name: "empty research_summary is accepted",
		tool: "plan_start", args: map[string]any{"topic": "t", "issues": []any{}, "research_summary": ""},
		want: map[string]any{"$.issueCount": 0}, state: map[string]map[string]any{planPath: {"$.research_summary": "", "$.issues.length": 0}},
	}, {
		name: "missing research_summary", tool: "plan_start",
		args:   map[string]any{"topic": "t", "issues": []any{"a"}},
		errHas: `missing required parameter "research_summary"`,
		state:  map[string]map[string]any{planPath: nil},
	}, {
		name: "empty topic", tool: "plan_start",
		args:   map[string]any{"topic": "", "issues": []any{"a"}, "research_summary": "r"},
		errHas: `parameter "topic"`,
	}, {
		name: "issues must be strings", tool: "plan_start",
		args:   map[string]any{"topic": "t", "issues": []any{"a", 2}, "research_summary": "r"},
		errHas: `parameter "issues[1]" must be a string, got number`,
	}})
}

func TestPlanStartCorruptPlan(t *testing.T) {
	e, proj := newEngine(t)
	putFiles(t, proj, files{planPath: "{not json"})
	before := snapshot(t, proj)
	_, err := e.CallTool(t.Context(), "plan_start", map[string]any{"topic": "t", "issues": []any{}, "research_summary": "r"})
	if err == nil || !containsAll(err.Error(), "plan.json", "corrupt", "nexus state repair") {
		t.Fatalf("err = %v, want a corrupt-file error naming plan.json", err)
	}
	if after := snapshot(t, proj); len(after) != len(before) || after[proj+"/"+planPath] != "{not json" {
		t.Fatalf("files changed: %v", after)
	}
}

func TestPlanStatus(t *testing.T) {
	decided := issue(1, "Pick a format", "decided")
	decided["decision"] = "JSON"
	decided["how_agents"] = []any{"architect"}
	decided["how_summary"] = map[string]any{"architect": "JSON is simplest"}
	full := onePlan(10, decided, issue(2, "Scope", "pending"))
	minimal := onePlan(11, issue(1, "a", "pending"), issue(2, "b", "pending"))
	delete(minimal, "research_summary")
	runCases(t, []toolCase{{
		name: "inactive", tool: "plan_status",
		want: map[string]any{"$.active": false, "$.plan_id": absent},
	}, {
		name: "full", tool: "plan_status", pre: files{planPath: full},
		want: map[string]any{
			"$.active": true, "$.plan_id": 10, "$.topic": "Refactor state layer",
			"$.research_summary": "Reviewed codebase for state dependencies.",
			"$.summary":          map[string]any{"total": 2, "pending": 1, "decided": 1},
			"$.issues[0]":        decided, "$.issues[1]": issue(2, "Scope", "pending"),
		},
	}, {
		name: "minimal", tool: "plan_status", pre: files{planPath: minimal},
		want: map[string]any{"$.summary": map[string]any{"total": 2, "pending": 2, "decided": 0}, "$.research_summary": absent},
	}, {
		name: "no parameters accepted", tool: "plan_status", args: map[string]any{"verbose": true},
		errHas: `unknown parameter "verbose"`,
	}})
}

func TestPlanUpdate(t *testing.T) {
	decided := issue(1, "Identify coupling", "decided")
	decided["decision"] = "Split the store"
	decided["how_agents"] = []any{"architect"}
	two := onePlan(2, issue(1, "a", "pending"), issue(2, "b", "pending"))
	runCases(t, []toolCase{{
		name: "add", tool: "plan_update", pre: files{planPath: two},
		args:  map[string]any{"action": "add", "title": "new issue"},
		want:  map[string]any{"$.added": true, "$.issue": issue(3, "new issue", "pending")},
		state: map[string]map[string]any{planPath: {"$.issues.length": 3, "$.issues[2]": issue(3, "new issue", "pending")}},
	}, {
		name: "add to an empty plan gets id 1", tool: "plan_update", pre: files{planPath: onePlan(2)},
		args: map[string]any{"action": "add", "title": "first"},
		want: map[string]any{"$.issue.id": 1},
	}, {
		name: "remove does not renumber", tool: "plan_update", pre: files{planPath: two},
		args:  map[string]any{"action": "remove", "issue_id": 1},
		want:  map[string]any{"$.removed": true, "$.issue": map[string]any{"id": 1}},
		state: map[string]map[string]any{planPath: {"$.issues.length": 1, "$.issues[0].id": 2}},
	}, {
		name: "edit", tool: "plan_update", pre: files{planPath: two},
		args:  map[string]any{"action": "edit", "issue_id": 2, "title": "edited"},
		want:  map[string]any{"$.edited": true, "$.issue": map[string]any{"id": 2, "title": "edited"}},
		state: map[string]map[string]any{planPath: {"$.issues[1].title": "edited"}},
	}, {
		name: "modify is an alias of edit", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "modify", "issue_id": 1, "title": "renamed"},
		want: map[string]any{"$.edited": true, "$.issue.title": "renamed"},
	}, {
		name: "reopen drops the decision key", tool: "plan_update", pre: files{planPath: onePlan(3, decided)},
		args:  map[string]any{"action": "reopen", "issue_id": 1},
		want:  map[string]any{"$.reopened": true, "$.issue": issue(1, "Identify coupling", "pending")},
		state: map[string]map[string]any{planPath: {"$.issues[0].status": "pending", "$.issues[0].decision": absent, "$.issues[0].how_agents[0]": "architect"}},
	}, {
		name: "issue_id as a string", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "remove", "issue_id": "2"},
		want: map[string]any{"$.issue.id": 2},
	}, {
		name: "no plan", tool: "plan_update", args: map[string]any{"action": "add", "title": "x"},
		err: "No active plan session", state: map[string]map[string]any{planPath: nil},
	}, {
		name: "remove without issue_id", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "remove"}, err: "issue_id is required for remove",
	}, {
		name: "reopen without issue_id", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "reopen"}, err: "issue_id is required for reopen",
	}, {
		name: "edit without title", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "edit", "issue_id": 1}, err: "issue_id and title are required for edit",
	}, {
		name: "add without title", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "add"}, err: "title is required for add",
	}, {
		name: "add with an empty title", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "add", "title": ""}, err: "title is required for add",
	}, {
		name: "not found", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "edit", "issue_id": 999, "title": "x"}, err: "Issue 999 not found",
	}, {
		name: "unknown action", tool: "plan_update", pre: files{planPath: two},
		args:   map[string]any{"action": "invalid"},
		errHas: `Unknown action: parameter "action" must be one of "add", "remove", "edit", "reopen", got "invalid"`,
	}, {
		name: "missing action", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{}, errHas: `missing required parameter "action"`,
	}, {
		name: "fractional issue_id", tool: "plan_update", pre: files{planPath: two},
		args: map[string]any{"action": "remove", "issue_id": 1.5}, errHas: `parameter "issue_id" must be an integer, got number`,
	}})
}

func TestPlanDecide(t *testing.T) {
	two := onePlan(4, issue(1, "a", "pending"), issue(2, "b", "pending"))
	one := onePlan(5, issue(1, "only", "pending"))
	runCases(t, []toolCase{{
		name: "decide one of two", tool: "plan_decide", pre: files{planPath: two},
		args: map[string]any{"issue_id": 1, "decision": "Use JSON"},
		want: map[string]any{"$.decided": true, "$.issue": "a", "$.allComplete": false, "$.remaining": []any{issue(2, "b", "pending")}, "$.message": absent},
		state: map[string]map[string]any{planPath: {
			"$.issues[0].status": "decided", "$.issues[0].decision": "Use JSON", "$.issues[0].how_agents": absent,
			"$.issues[1].status": "pending",
		}},
	}, {
		name: "decide the last with how fields", tool: "plan_decide", pre: files{planPath: one},
		args: map[string]any{
			"issue_id": 1, "decision": "Go", "how_agents": []any{"architect", "postdoc"},
			"how_summary": map[string]any{"architect": "fits"}, "how_agent_ids": map[string]any{"architect": "uuid-ac01"},
		},
		want: map[string]any{"$.allComplete": true, "$.remaining": absent, "$.message": "All issues are decided. Next: turn the decisions into tasks with task_add (owner, deps, acceptance), then carry them out."},
		state: map[string]map[string]any{planPath: {
			"$.issues[0].how_agents.length": 2, "$.issues[0].how_agents[0]": "architect",
			"$.issues[0].how_summary.architect": "fits", "$.issues[0].how_agent_ids.architect": "uuid-ac01",
		}},
	}, {
		name: "summary is an alias of decision", tool: "plan_decide", pre: files{planPath: one},
		args:  map[string]any{"issue_id": "1", "summary": "Aliased"},
		want:  map[string]any{"$.decided": true},
		state: map[string]map[string]any{planPath: {"$.issues[0].decision": "Aliased"}},
	}, {
		name: "decision wins over summary", tool: "plan_decide", pre: files{planPath: one},
		args:  map[string]any{"issue_id": 1, "decision": "Real", "summary": "ignored"},
		state: map[string]map[string]any{planPath: {"$.issues[0].decision": "Real"}},
	}, {
		name: "how fields sent as JSON text", tool: "plan_decide", pre: files{planPath: one},
		args:  map[string]any{"issue_id": 1, "decision": "d", "how_agents": `["architect"]`, "how_summary": `{"architect":"x"}`},
		state: map[string]map[string]any{planPath: {"$.issues[0].how_agents[0]": "architect", "$.issues[0].how_summary.architect": "x"}},
	}, {
		name: "no plan", tool: "plan_decide", args: map[string]any{"issue_id": 1, "decision": "d"},
		err: "No active plan session",
	}, {
		name: "not found", tool: "plan_decide", pre: files{planPath: one},
		args: map[string]any{"issue_id": 7, "decision": "d"}, err: "Issue 7 not found",
	}, {
		name: "no decision", tool: "plan_decide", pre: files{planPath: one},
		args: map[string]any{"issue_id": 1}, errHas: `missing required parameter "decision"`,
	}, {
		name: "how_summary values must be strings", tool: "plan_decide", pre: files{planPath: one},
		args: map[string]any{"issue_id": 1, "decision": "d", "how_summary": map[string]any{"architect": 3}}, errHas: `parameter "how_summary.architect" must be a string, got number`,
	}})
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !contains(s, x) {
			return false
		}
	}
	return true
}

// plan_start numbers a plan after every plan archived in history.json,
// including cycles another process appended since the engine last read
// it, and cycles edited in place (the file then read again whole).
func TestPlanStartIDFollowsHistoryChanges(t *testing.T) {
	e, proj := newEngine(t)
	start := func(want float64) {
		t.Helper()
		res, msg := call(t, e, "plan_start", map[string]any{"topic": "t", "issues": []any{"a"}, "research_summary": "r"})
		if msg != "" || res["plan_id"] != want {
			t.Fatalf("plan_start: %v %q, want plan_id %v", res, msg, want)
		}
	}
	planned := func(id int) map[string]any {
		return cycle("2026-01-01T00:00:00Z", "main", map[string]any{"id": id, "topic": "t", "issues": []any{}, "created_at": "2026-01-01T00:00:00Z"})
	}
	putFiles(t, proj, files{historyPath: map[string]any{"cycles": []any{planned(3)}}})
	start(4)
	start(5) // plan 4 archived by this engine
	b := mustRead(t, filepath.Join(proj, historyPath))
	var h map[string]any
	json.Unmarshal(b, &h)
	h["cycles"] = append(h["cycles"].([]any), planned(40)) // another process appends
	putFiles(t, proj, files{historyPath: h})
	start(41)
	h["cycles"] = []any{planned(7)} // rewritten: the archived plans are gone
	putFiles(t, proj, files{historyPath: h, planPath: nil})
	start(8)
}
