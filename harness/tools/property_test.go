package tools_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/schema"
)

// FuzzToolCallsCommitValidState is the property behind the store's
// partial validation at commit (only the top level and the tasks a write
// changed are checked when the version it read is known valid): from a
// random schema-valid state, any sequence of tool calls, mixed with
// rewrites by another process, leaves only files that match their schemas
// — checked here with the real nexus-core schemas on the files on disk.
//
//	go test -run '^$' -fuzz FuzzToolCallsCommitValidState ./harness/tools/
func FuzzToolCallsCommitValidState(f *testing.F) {
	for i := range 24 {
		f.Add(binary.LittleEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15+1), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed []byte, steps uint8) {
		var s [16]byte
		copy(s[:], seed)
		r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:])))
		e, proj := newEngine(t)
		putFiles(t, proj, files{tasksPath: randomTasks(r), planPath: randomPlan(r)})
		if r.IntN(2) == 0 {
			putFiles(t, proj, files{historyPath: map[string]any{"schema_version": "0.5", "cycles": []any{}}})
		}
		assertStateValid(t, proj, "the generated state", "")
		foreign, bad, member := "", int64(0), false
		for i := range int(steps%40) + 1 {
			if r.IntN(5) == 0 {
				// Another process rewrites tasks.json, with an unknown
				// member and sometimes a task the schema refuses: the
				// next write must not trust what the engine cached, and
				// must not commit the invalid task.
				foreign, bad = rewriteExternally(t, proj, r)
				member = member || strings.Contains(foreign, "x_other_harness")
			}
			tool, args := randomCall(r)
			_, err := e.CallTool(t.Context(), tool, args)
			when := fmt.Sprintf("step %d: %s %v (err %v)", i, tool, args, err)
			assertStateValid(t, proj, when, foreign)
			// A write over the invalid task is refused, naming it and
			// the member the schema refuses.
			if bad != 0 && tool == "task_add" {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(task %d)", bad)) || !strings.Contains(err.Error(), "/tasks/") {
					t.Fatalf("%s: a task_add over a tasks.json whose task %d is invalid was not refused by name", when, bad)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(proj, tasksPath)); string(b) != foreign {
				bad = 0 // nexus wrote it (valid, checked above) or it is gone
			}
			// What the other process wrote is the base of every later
			// write: its member survives until the cycle is closed.
			if b, err := os.ReadFile(filepath.Join(proj, tasksPath)); err == nil && member && !strings.Contains(string(b), "x_other_harness") {
				t.Fatalf("%s: a write lost the other process's tasks.json:\n%s", when, b)
			} else if err != nil {
				foreign, member = "", false
			}
		}
	})
}

// The partial check must not let a write turn an invalid file written by
// someone else into a committed one: the base is not known valid, so the
// whole file is checked.
func TestWriteOverExternallyInvalidTasksIsRefused(t *testing.T) {
	e, proj := newEngine(t)
	bad := map[string]any{"goal": "g", "decisions": []any{}, "tasks": []any{map[string]any{"id": 1, "title": "t", "context": "c", "status": "bogus", "deps": []any{}}}}
	putFiles(t, proj, files{tasksPath: bad})
	before := string(mustRead(t, filepath.Join(proj, tasksPath)))
	if _, err := e.CallTool(t.Context(), "task_list", nil); err != nil {
		t.Fatalf("a read does not check the schema: %v", err)
	}
	_, err := e.CallTool(t.Context(), "task_add", map[string]any{"title": "x", "context": "y"})
	if err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("task_add over an invalid tasks.json: err = %v, want a schema refusal", err)
	}
	if after := string(mustRead(t, filepath.Join(proj, tasksPath))); after != before {
		t.Fatalf("tasks.json changed:\n%s", after)
	}
}

var (
	words    = []string{"alpha", "beta", "<gamma>", "d&e", "é", "\"q\"", "tab\there", "line\nbreak", "\u2028", "x"}
	statuses = []string{"pending", "in_progress", "completed"}
	policies = []string{"fresh", "resume_if_same_artifact", "resume"}
)

func text(r *rand.Rand) string {
	n := r.IntN(3) + 1
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

func randomTask(r *rand.Rand, id int) map[string]any {
	t := map[string]any{"id": id, "title": text(r), "context": text(r), "status": statuses[r.IntN(3)], "deps": []any{}}
	for _, k := range []string{"approach", "acceptance", "risk", "owner", "owner_agent_id"} {
		if r.IntN(2) == 0 {
			t[k] = text(r)
		}
	}
	if r.IntN(2) == 0 {
		t["owner_reuse_policy"] = policies[r.IntN(3)]
	}
	if r.IntN(2) == 0 {
		t["plan_issue"] = r.IntN(5) + 1
	}
	if r.IntN(2) == 0 {
		t["created_at"] = "2026-01-02T03:04:05.678Z"
	}
	if id > 1 && r.IntN(2) == 0 {
		t["deps"] = []any{r.IntN(id-1) + 1}
	}
	if r.IntN(4) == 0 {
		t["x_future"] = map[string]any{"k": []any{1, "two", nil}}
	}
	return t
}

func randomTasks(r *rand.Rand) any {
	if r.IntN(5) == 0 {
		return nil
	}
	n := r.IntN(12)
	ts := make([]any, n)
	for i := range ts {
		ts[i] = randomTask(r, i+1)
	}
	decisions := []any{}
	for range r.IntN(3) {
		decisions = append(decisions, text(r))
	}
	tf := map[string]any{"goal": text(r), "decisions": decisions, "tasks": ts}
	if r.IntN(2) == 0 {
		tf["schema_version"] = "0.5"
	}
	if r.IntN(4) == 0 {
		tf["x_top"] = "kept"
	}
	return tf
}

func randomPlan(r *rand.Rand) any {
	if r.IntN(3) == 0 {
		return nil
	}
	issues := []any{}
	for i := range r.IntN(4) {
		is := map[string]any{"id": i + 1, "title": text(r), "status": "pending"}
		if r.IntN(2) == 0 {
			is["status"], is["decision"] = "decided", text(r)
		}
		issues = append(issues, is)
	}
	return map[string]any{"id": r.IntN(3) + 1, "topic": text(r), "issues": issues, "created_at": "2026-01-02T03:04:05Z", "research_summary": text(r)}
}

func randomCall(r *rand.Rand) (string, map[string]any) {
	opt := func(m map[string]any, k string, v any) {
		if r.IntN(2) == 0 {
			m[k] = v
		}
	}
	switch r.IntN(10) {
	case 0, 1, 2:
		a := map[string]any{"title": text(r), "context": text(r)}
		for _, k := range []string{"approach", "acceptance", "risk", "owner", "owner_agent_id", "goal"} {
			opt(a, k, text(r))
		}
		if r.IntN(6) == 0 {
			a["goal"] = ""
		}
		opt(a, "owner_reuse_policy", policies[r.IntN(3)])
		opt(a, "plan_issue", float64(r.IntN(4)+1))
		opt(a, "deps", []any{float64(r.IntN(5) + 1)})
		opt(a, "decisions", []any{text(r)})
		return "task_add", a
	case 3, 4:
		return "task_update", map[string]any{"id": float64(r.IntN(14) + 1), "status": statuses[r.IntN(3)]}
	case 5:
		return "task_list", nil
	case 6:
		return "plan_start", map[string]any{"topic": text(r), "issues": []any{text(r), text(r)}, "research_summary": text(r)}
	case 7:
		a := map[string]any{"action": []string{"add", "remove", "edit", "reopen"}[r.IntN(4)], "issue_id": float64(r.IntN(4) + 1)}
		opt(a, "title", text(r))
		return "plan_update", a
	case 8:
		return "plan_decide", map[string]any{"issue_id": float64(r.IntN(4) + 1), "decision": text(r)}
	}
	return "task_close", nil
}

// rewriteExternally rewrites tasks.json as another process would: a new
// inode, one task changed (one time in three in a way the schema
// refuses). Half the time only that task's bytes change (the file as
// nexus or the Node harness writes it); otherwise the file is re-encoded
// with its members in another order and an unknown member added. It returns what
// it wrote and the id of the task it made invalid (0: none).
func rewriteExternally(t *testing.T, proj string, r *rand.Rand) (string, int64) {
	p := filepath.Join(proj, tasksPath)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", 0
	}
	var tf map[string]any
	if json.Unmarshal(b, &tf) != nil {
		t.Fatalf("tasks.json is not JSON: %s", b)
	}
	ts, _ := tf["tasks"].([]any)
	if len(ts) == 0 {
		return "", 0
	}
	i := r.IntN(len(ts))
	task := ts[i].(map[string]any)
	id, _ := task["id"].(float64)
	var bad int64
	if r.IntN(3) == 0 {
		// Something the schema refuses but the task still decodes.
		switch r.IntN(5) {
		case 0:
			task["status"] = "bogus"
		case 1:
			task["title"] = ""
		case 2:
			delete(task, "context")
		case 3:
			task["created_at"] = "yesterday"
		default:
			task["owner_reuse_policy"] = "sometimes"
		}
		bad = int64(id)
	} else {
		task["status"] = statuses[r.IntN(3)]
	}
	var out []byte
	if r.IntN(2) == 0 {
		// Only this task's bytes change: re-encode it alone, in its
		// place, in the file's own layout.
		old := taskBytes(t, b, i)
		nb, _ := json.MarshalIndent(task, "    ", "  ")
		out = bytes.Replace(b, old, nb, 1)
	} else {
		tf["x_other_harness"] = true
		out, _ = json.MarshalIndent(tf, "", "  ")
	}
	var check any
	if json.Unmarshal(out, &check) != nil {
		t.Fatalf("the rewrite is not JSON:\n%s", out)
	}
	writeOver(t, p, out)
	return string(out), bad
}

// taskBytes returns the bytes of the i-th task of a tasks.json text.
func taskBytes(t *testing.T, b []byte, i int) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	dec.ReadToken()
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		if name.String() != "tasks" {
			dec.SkipValue()
			continue
		}
		dec.ReadToken()
		for k := 0; ; k++ {
			v, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			if k == i {
				return bytes.Clone(v)
			}
		}
	}
	t.Fatal("no tasks")
	return nil
}

// assertStateValid checks every state file on disk against its nexus-core
// schema, tolerating only what the contracts mandate: members the schemas
// do not declare (kept for forward compatibility; the generator's all
// start with x_), tasks.json's goal "" (C7). A tasks.json whose content is
// foreign (written by the test as another process) is not nexus's to check.
func assertStateValid(t testing.TB, proj, when, foreign string) {
	t.Helper()
	for rel, loc := range map[string]string{planPath: schema.StatePlan, tasksPath: schema.StateTasks, historyPath: schema.StateHistory} {
		b, err := os.ReadFile(filepath.Join(proj, rel))
		if err != nil || rel == tasksPath && string(b) == foreign {
			continue
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", when, rel, err)
		}
		ps, err := schemas.Validate(loc, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Kind == schema.KindAdditionalProperties && strings.Contains(p.Message, "x_") ||
				rel == tasksPath && p.Pointer == "/goal" {
				continue
			}
			t.Fatalf("%s: %s is not schema-valid: %s\n%s", when, rel, p, b)
		}
	}
}
