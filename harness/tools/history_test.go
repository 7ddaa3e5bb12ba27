package tools_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func cycle(when, branch string, plan any, tasks ...any) map[string]any {
	if tasks == nil {
		tasks = []any{}
	}
	return map[string]any{"completed_at": when, "branch": branch, "plan": plan, "tasks": tasks}
}

func TestHistorySearch(t *testing.T) {
	decided := issue(1, "Storage", "decided")
	decided["decision"] = "Use <files> & locks"
	statePlan := onePlan(1, decided, issue(2, "Open", "pending"))
	statePlan["topic"] = "State layer"
	five := []any{}
	for i := 1; i <= 5; i++ {
		five = append(five, cycle(fmt.Sprintf("2026-01-0%dT00:00:00Z", i), fmt.Sprintf("b%d", i), nil))
	}
	two := []any{
		cycle("2026-01-01T00:00:00Z", "main", map[string]any{"id": 1, "topic": "Docs", "issues": []any{}, "created_at": "2026-01-01T00:00:00Z"}),
		cycle("2026-01-02T00:00:00Z", "feat", statePlan, task(1, "a", "completed"), task(2, "b", "completed")),
	}
	runCases(t, []toolCase{{
		name: "no history", tool: "history_search", args: map[string]any{},
		want: map[string]any{"$.total": 0, "$.showing": 0, "$.cycles": []any{}},
	}, {
		name: "everything, legacy cycles without schema_version", tool: "history_search",
		pre:  files{historyPath: map[string]any{"cycles": five[:3]}},
		want: map[string]any{"$.total": 3, "$.showing": 3, "$.cycles.length": 3, "$.cycles[0].branch": "b1", "$.cycles[0].topic": absent, "$.cycles[0].task_count": 0},
	}, {
		name: "case-insensitive match with a summary", tool: "history_search", args: map[string]any{"query": "STATE LAYER"},
		pre: files{historyPath: map[string]any{"cycles": two}},
		want: map[string]any{"$.total": 1, "$.cycles[0]": map[string]any{
			"completed_at": "2026-01-02T00:00:00Z", "branch": "feat", "topic": "State layer",
			"decisions": []any{map[string]any{"title": "Storage", "decision": "Use <files> & locks"}}, "task_count": 2,
		}},
	}, {
		name: "matches raw text such as <, & and the branch", tool: "history_search", args: map[string]any{"query": "<files> &"},
		pre: files{historyPath: map[string]any{"cycles": two}}, want: map[string]any{"$.total": 1},
	}, {
		name: "matches across keys like JSON.stringify", tool: "history_search", args: map[string]any{"query": `"branch":"main"`},
		pre: files{historyPath: map[string]any{"cycles": two}}, want: map[string]any{"$.total": 1, "$.cycles[0].decisions": []any{}},
	}, {
		name: "no match", tool: "history_search", args: map[string]any{"query": "nonexistent-xyz"},
		pre: files{historyPath: map[string]any{"cycles": two}}, want: map[string]any{"$.total": 0, "$.showing": 0, "$.cycles": []any{}},
	}, {
		name: "last_n keeps the newest, in order", tool: "history_search", args: map[string]any{"last_n": 2},
		pre:  files{historyPath: map[string]any{"cycles": five}},
		want: map[string]any{"$.total": 5, "$.showing": 2, "$.cycles[0].branch": "b4", "$.cycles[1].branch": "b5"},
	}, {
		name: "default limit is 10", tool: "history_search",
		pre:  files{historyPath: map[string]any{"cycles": append(append(append([]any{}, five...), five...), five...)}},
		want: map[string]any{"$.total": 15, "$.showing": 10},
	}, {
		name: "last_n as a string", tool: "history_search", args: map[string]any{"last_n": "1"},
		pre: files{historyPath: map[string]any{"cycles": five}}, want: map[string]any{"$.showing": 1, "$.cycles[0].branch": "b5"},
	}, {
		name: "last_n must be positive", tool: "history_search", args: map[string]any{"last_n": 0},
		errHas: `parameter "last_n" must be at least 1, got 0`,
	}, {
		name: "query must be text", tool: "history_search", args: map[string]any{"query": 5},
		errHas: `parameter "query" must be a string, got number`,
	}})
}

func TestContext(t *testing.T) {
	runCases(t, []toolCase{{
		name: "no tasks", tool: "context",
		want: map[string]any{"$.branch": "main", "$.activeMode": nil, "$.decisions": []any{}, "$.goal": absent, "$.tasksSummary": absent},
	}, {
		name: "a plan alone is not team mode", tool: "context", pre: files{planPath: onePlan(1)},
		want: map[string]any{"$.activeMode": nil},
	}, {
		name: "team", tool: "context",
		pre: files{tasksPath: taskFile("Ship", []string{"Use Go", "Use MCP"}, task(1, "a", "completed"), task(2, "b", "pending"), task(3, "c", "in_progress"))},
		want: map[string]any{
			"$.activeMode": "team", "$.goal": "Ship", "$.decisions": []any{"Use Go", "Use MCP"},
			"$.tasksSummary": map[string]any{"total": 3, "completed": 1, "pending": 1},
		},
	}, {
		name: "malformed tasks.json is ignored", tool: "context", pre: files{tasksPath: "{oops"},
		want: map[string]any{"$.activeMode": nil, "$.decisions": []any{}},
	}, {
		name: "odd fields are skipped, the rest is read", tool: "context",
		pre:  files{tasksPath: map[string]any{"goal": 3, "decisions": []any{"ok", 4}, "tasks": []any{map[string]any{"status": "pending", "extra": true}}}},
		want: map[string]any{"$.activeMode": "team", "$.goal": "", "$.decisions": []any{"ok"}, "$.tasksSummary.pending": 1},
	}})
}

// A repeated search of an unchanged history.json is answered from the
// kept result; any change to the file is seen by the next search.
func TestHistorySearchSeesChanges(t *testing.T) {
	e, proj := newEngine(t)
	one := []any{cycle("2026-01-01T00:00:00Z", "main", nil)}
	putFiles(t, proj, files{historyPath: map[string]any{"cycles": one}})
	time.Sleep(50 * time.Millisecond) // past the racy window: results are kept
	for range 2 {
		if res, _ := call(t, e, "history_search", map[string]any{"query": "main"}); res["total"] != 1.0 {
			t.Fatalf("total %v, want 1", res["total"])
		}
	}
	putFiles(t, proj, files{historyPath: map[string]any{"cycles": append(one, cycle("2026-01-02T00:00:00Z", "main", nil))}})
	if res, _ := call(t, e, "history_search", map[string]any{"query": "main"}); res["total"] != 2.0 {
		t.Fatalf("after a rewrite: total %v, want 2", res["total"])
	}
	time.Sleep(50 * time.Millisecond)
	if res, _ := call(t, e, "history_search", map[string]any{"query": "main"}); res["total"] != 2.0 {
		t.Fatalf("later: total %v, want 2", res["total"])
	}
}

// A long-lived engine's history_search, which reads only what another
// process appended since its last search, answers as an engine reading
// the file afresh does, through appends, edits of old cycles, reformats,
// members added after the cycles and the file's removal.
func TestHistorySearchIncrementalMatchesFresh(t *testing.T) {
	e, proj := newEngine(t)
	p := filepath.Join(proj, historyPath)
	os.MkdirAll(filepath.Dir(p), 0o755)
	r := rand.New(rand.NewPCG(5, 9))
	var cycles []any
	extra := map[string]any{}
	write := func(indent string) {
		doc := map[string]any{"schema_version": "0.5", "cycles": cycles}
		for k, v := range extra {
			doc[k] = v
		}
		var b []byte
		if indent == "" {
			b, _ = json.Marshal(doc)
		} else {
			b, _ = json.MarshalIndent(doc, "", indent)
		}
		writeOver(t, p, b)
	}
	queries := []map[string]any{{}, {"query": "auth"}, {"query": "AUTH", "last_n": 2}, {"query": "b3"}, {"query": "nothing-matches"}}
	for step := range 60 {
		switch op := r.IntN(10); {
		case op < 5 || len(cycles) == 0:
			for range r.IntN(3) + 1 {
				topic := fmt.Sprintf("Cycle %d", len(cycles))
				if r.IntN(3) == 0 {
					topic += ": auth tokens"
				}
				cycles = append(cycles, cycle(fmt.Sprintf("2026-01-01T00:%02d:00Z", len(cycles)%60), fmt.Sprintf("b%d", len(cycles)),
					map[string]any{"id": len(cycles) + 1, "topic": topic, "issues": []any{}, "created_at": "2026-01-01T00:00:00Z"}))
			}
			write("  ")
		case op == 5:
			c := cycles[r.IntN(len(cycles))].(map[string]any)
			c["branch"] = fmt.Sprintf("edited-%d", step)
			write("  ")
		case op == 6:
			write([]string{"", "\t", "    "}[r.IntN(3)])
		case op == 7:
			extra["x_note"] = step
			write("  ")
		case op == 8:
			os.Remove(p)
		default:
			cycles = cycles[:r.IntN(len(cycles))]
			write("  ")
		}
		for _, q := range queries {
			got, err := e.CallToolJSON(t.Context(), "history_search", q)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			want := searchAfresh(t, proj, q)
			if string(got) != string(want) {
				t.Fatalf("step %d, %v:\n%s\nafresh:\n%s", step, q, got, want)
			}
		}
	}
}

// searchAfresh answers a history_search over proj with an engine that
// has read nothing before.
func searchAfresh(t *testing.T, proj string, args map[string]any) []byte {
	t.Helper()
	fresh, freshProj := newEngine(t)
	if b, err := os.ReadFile(filepath.Join(proj, historyPath)); err == nil {
		os.MkdirAll(filepath.Join(freshProj, ".nexus"), 0o755)
		writeOver(t, filepath.Join(freshProj, historyPath), b)
	}
	out, err := fresh.CallToolJSON(t.Context(), "history_search", args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
