package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

// task_list's answer kept encoded (what the MCP server sends) is the
// encoding of its answer as an object, for no task list, for a list, and
// again after every change to it: a kept answer never outlives its version
// of tasks.json.
func TestTaskListJSONMatchesResult(t *testing.T) {
	e, proj := newEngine(t)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		got, err := e.CallToolJSON(ctx, "task_list", nil)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		m, err := e.CallTool(ctx, "task_list", nil)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want, err := state.MarshalCompact(m)
		if err != nil {
			t.Fatal(err)
		}
		var gv, wv any
		if err := json.Unmarshal(got, &gv); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		_ = json.Unmarshal(want, &wv)
		if !reflect.DeepEqual(gv, wv) {
			t.Fatalf("%s:\n%s\nwant\n%s", step, got, want)
		}
		// The tasks, re-used task by task from earlier answers, are
		// what encoding the file's tasks afresh gives.
		if tf, ok, err := state.New(e.Store.L, nil).ReadTasks(); err == nil && ok {
			fresh, _ := state.MarshalCompact(tf.Tasks)
			if !bytes.HasSuffix(got, append(append([]byte(`"tasks":`), fresh...), '}')) {
				t.Fatalf("%s: the answer's tasks\n%s\nare not\n%s", step, got, fresh)
			}
		}
		again, _ := e.CallToolJSON(ctx, "task_list", nil)
		if !bytes.Equal(again, got) {
			t.Fatalf("%s: a repeated call answered differently:\n%s\n%s", step, again, got)
		}
	}
	check("no task list")
	putFiles(t, proj, files{tasksPath: map[string]any{"goal": "g", "decisions": []any{}, "tasks": []any{
		map[string]any{"id": 1, "title": "a", "context": "c", "status": "completed", "deps": []any{}, "x-note": map[string]any{"k": 1}},
		map[string]any{"id": 2, "title": "b", "context": "c", "status": "pending", "deps": []any{1}},
	}}})
	check("two tasks")
	for i, args := range []map[string]any{
		{"title": "third", "context": "c", "deps": []any{2}},
		{"title": "fourth", "context": "c", "goal": "new goal"},
	} {
		if _, err := e.CallToolJSON(ctx, "task_add", args); err != nil {
			t.Fatal(err)
		}
		check("after task_add " + string(rune('1'+i)))
	}
	if _, err := e.CallToolJSON(ctx, "task_update", map[string]any{"id": 2, "status": "completed"}); err != nil {
		t.Fatal(err)
	}
	check("after task_update")
	got, _ := e.CallToolJSON(ctx, "task_list", nil)
	if !bytes.Contains(got, []byte(`"ready":[3,4]`)) || !bytes.Contains(got, []byte(`"goal":"new goal"`)) {
		t.Fatalf("the answer does not follow the changes: %s", got)
	}
}
