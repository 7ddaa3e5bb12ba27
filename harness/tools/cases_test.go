package tools_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	planPath    = ".nexus/state/plan.json"
	tasksPath   = ".nexus/state/tasks.json"
	historyPath = ".nexus/history.json"
)

// toolCase is one call against a fresh project.
type toolCase struct {
	name   string
	tool   string
	pre    files
	args   map[string]any
	want   map[string]any // result path → value
	err    string         // exact domain error message
	errHas string         // substring of the domain error message
	// state maps a project-relative file to path expectations: nil = the
	// file must be absent, an empty map = it must exist.
	state map[string]map[string]any
}

func runCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, proj := newEngine(t)
			putFiles(t, proj, tc.pre)
			before := snapshot(t, proj)
			res, msg := call(t, e, tc.tool, tc.args)
			wantErr := tc.err != "" || tc.errHas != ""
			switch {
			case wantErr && msg == "":
				t.Fatalf("got result %v, want error %q%q", res, tc.err, tc.errHas)
			case !wantErr && msg != "":
				t.Fatalf("unexpected error: %s", msg)
			case tc.err != "" && msg != tc.err:
				t.Fatalf("error = %q, want exactly %q", msg, tc.err)
			case tc.errHas != "" && !strings.Contains(msg, tc.errHas):
				t.Fatalf("error = %q, want it to contain %q", msg, tc.errHas)
			}
			if wantErr {
				if after := snapshot(t, proj); !reflect.DeepEqual(before, after) {
					t.Errorf("a failing call changed the files:\nbefore %v\nafter  %v", before, after)
				}
			} else {
				check(t, "result", res, tc.want)
			}
			for rel, want := range tc.state {
				p := filepath.Join(proj, rel)
				_, err := os.Stat(p)
				if want == nil {
					if err == nil {
						t.Errorf("%s exists, want absent", rel)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
				if len(want) > 0 {
					check(t, rel, readJSON(t, p), want)
				}
			}
		})
	}
}

// onePlan is a valid plan.json with the given issues.
func onePlan(id int, issues ...map[string]any) map[string]any {
	if issues == nil {
		issues = []map[string]any{}
	}
	return map[string]any{
		"id": id, "topic": "Refactor state layer", "issues": issues,
		"research_summary": "Reviewed codebase for state dependencies.",
		"created_at":       "2026-04-13T00:00:00.000Z",
	}
}

func issue(id int, title, status string) map[string]any {
	return map[string]any{"id": id, "title": title, "status": status}
}

func task(id int, title, status string, deps ...int) map[string]any {
	if deps == nil {
		deps = []int{}
	}
	return map[string]any{"id": id, "title": title, "context": "ctx " + title, "status": status, "deps": deps}
}

func taskFile(goal string, decisions []string, tasks ...map[string]any) map[string]any {
	if decisions == nil {
		decisions = []string{}
	}
	if tasks == nil {
		tasks = []map[string]any{}
	}
	return map[string]any{"goal": goal, "decisions": decisions, "tasks": tasks}
}
