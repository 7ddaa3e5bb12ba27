package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/schema"
)

// A commit checks a plan, task list or tracker as the file with its
// items' array emptied plus each item (the ones not known valid). These
// tests show that this is the whole file's check for nexus-core's
// schemas: the same problems, at the same pointers, for random and
// fuzzed files, valid and invalid.

type splitKind struct {
	name, loc, member string
	path              func(Layout) string
	gen               func(r *rand.Rand) any
}

var splitKinds = []splitKind{
	{"tasks", schema.StateTasks, "tasks", Layout.TasksPath, genTasksDoc},
	{"plan", schema.StatePlan, "issues", Layout.PlanPath, genPlanDoc},
	{"tracker", schema.StateTracker, "", Layout.TrackerPath, genTrackerDoc},
}

// wholeAndSplit checks doc whole and split; ok is false when doc has no
// array to split (the store checks such content whole).
func wholeAndSplit(t testing.TB, s *Store, k splitKind, doc []byte) (whole, split []schema.Problem, ok bool) {
	t.Helper()
	path := k.path(s.L)
	whole, err := s.check(path, k.loc, doc)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil, nil, false
	}
	var arr []any
	var shell []byte
	if k.member == "" {
		if arr, ok = v.([]any); !ok {
			return nil, nil, false
		}
		shell = []byte("[]")
	} else {
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, nil, false
		}
		if arr, ok = m[k.member].([]any); !ok {
			return nil, nil, false
		}
		m[k.member] = []any{}
		shell, _ = json.Marshal(m)
	}
	set := &itemSet{shell: shell, items: make([]item, len(arr))}
	for i, x := range arr {
		b, _ := json.Marshal(x)
		set.items[i].start = len(set.data)
		set.data = append(set.data, b...)
		set.items[i].end = len(set.data)
	}
	items := set.items
	itemLoc, ok := s.itemLocation(k.loc, k.member)
	if !ok {
		t.Fatalf("%s: the store would not check %s item by item", k.name, k.loc)
	}
	split, err = s.checkSplit(path, k.loc, itemLoc, k.member, set)
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if items[i].valid != (len(split) == 0) {
			t.Fatalf("item %d marked valid = %v with problems %v", i, items[i].valid, split)
		}
	}
	return whole, split, true
}

func sameProblems(a, b []schema.Problem) bool {
	key := func(ps []schema.Problem) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Pointer + "\x00" + p.Message + "\x00" + p.Kind + "\x00" + p.Keyword
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

func TestItemwiseCheckIsWholeCheck(t *testing.T) {
	s := newStore(t)
	for _, k := range splitKinds {
		t.Run(k.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(k.name))))
			invalid := 0
			for n := range 600 {
				v := k.gen(r)
				if n%3 != 0 {
					mutate(r, v, k.member)
				}
				doc, _ := json.Marshal(v)
				whole, split, ok := wholeAndSplit(t, s, k, doc)
				if !ok {
					continue
				}
				if len(whole) > 0 {
					invalid++
				}
				if !sameProblems(whole, split) {
					t.Fatalf("%s:\nwhole: %v\nsplit: %v", doc, whole, split)
				}
			}
			// Both kinds of file were compared.
			if invalid < 100 || invalid > 550 {
				t.Fatalf("%d of 600 files invalid: the generator does not mix valid and invalid files", invalid)
			}
		})
	}
}

// FuzzItemwiseCheckIsWholeCheck compares the two checks on any JSON a
// fuzzer derives from valid files.
//
//	go test -run '^$' -fuzz FuzzItemwiseCheckIsWholeCheck ./internal/state/
func FuzzItemwiseCheckIsWholeCheck(f *testing.F) {
	for i := range 12 {
		r := rand.New(rand.NewPCG(uint64(i), 3))
		k := splitKinds[i%len(splitKinds)]
		v := k.gen(r)
		if i%2 == 1 {
			mutate(r, v, k.member)
		}
		doc, _ := json.Marshal(v)
		f.Add(uint8(i), doc)
	}
	s := newStore(f)
	f.Fuzz(func(t *testing.T, kind uint8, doc []byte) {
		k := splitKinds[int(kind)%len(splitKinds)]
		whole, split, ok := wholeAndSplit(t, s, k, doc)
		if ok && !sameProblems(whole, split) {
			t.Fatalf("%s:\nwhole: %v\nsplit: %v", doc, whole, split)
		}
	})
}

var genWords = []string{"", "a", "engineer", "Fix the reader", "é\u2028", "x\ny", "2026-01-02T03:04:05Z"}

func genTask(r *rand.Rand, id int) map[string]any {
	t := map[string]any{"id": id, "title": "t", "context": "c", "status": []string{"pending", "in_progress", "completed"}[r.IntN(3)], "deps": []any{}}
	for _, k := range []string{"approach", "acceptance", "risk", "owner", "owner_agent_id"} {
		if r.IntN(2) == 0 {
			t[k] = genWords[r.IntN(len(genWords))]
		}
	}
	if r.IntN(2) == 0 {
		t["owner_reuse_policy"] = []string{"fresh", "resume_if_same_artifact", "resume"}[r.IntN(3)]
	}
	if r.IntN(2) == 0 {
		t["plan_issue"] = r.IntN(3) + 1
	}
	if r.IntN(2) == 0 {
		t["created_at"] = "2026-01-02T03:04:05.678Z"
	}
	if id > 1 && r.IntN(2) == 0 {
		t["deps"] = []any{r.IntN(id-1) + 1}
	}
	return t
}

func genTasksDoc(r *rand.Rand) any {
	ts := make([]any, r.IntN(6))
	for i := range ts {
		ts[i] = genTask(r, i+1)
	}
	d := map[string]any{"goal": "g", "decisions": []any{"d"}, "tasks": ts}
	if r.IntN(2) == 0 {
		d["schema_version"] = "0.5"
	}
	return d
}

func genPlanDoc(r *rand.Rand) any {
	is := make([]any, r.IntN(5))
	for i := range is {
		x := map[string]any{"id": i + 1, "title": "t", "status": "pending"}
		if r.IntN(2) == 0 {
			x["status"], x["decision"] = "decided", "d"
		}
		if r.IntN(3) == 0 {
			x["how_agents"] = []any{"architect"}
			x["how_summary"] = map[string]any{"architect": "s"}
			x["how_agent_ids"] = map[string]any{"architect": "a1"}
		}
		is[i] = x
	}
	d := map[string]any{"id": r.IntN(3) + 1, "topic": "t", "issues": is, "created_at": "2026-01-02T03:04:05Z"}
	if r.IntN(2) == 0 {
		d["research_summary"] = "r"
	}
	return d
}

func genTrackerDoc(r *rand.Rand) any {
	es := make([]any, r.IntN(5))
	for i := range es {
		e := map[string]any{"harness_id": "nexus", "started_at": "2026-01-02T03:04:05Z"}
		if r.IntN(2) == 0 {
			e["agent_name"], e["agent_id"] = "engineer", fmt.Sprint("a", i)
		}
		if r.IntN(2) == 0 {
			e["status"], e["stopped_at"] = "completed", "2026-01-02T04:04:05Z"
		}
		if r.IntN(3) == 0 {
			e["resume_count"], e["last_resumed_at"] = r.IntN(3), "2026-01-02T03:30:05Z"
		}
		if r.IntN(3) == 0 {
			e["files_touched"], e["last_message"] = []any{"a.go"}, "done"
		}
		es[i] = e
	}
	return es
}

// badValues are values of every JSON type, some of which the schemas
// refuse wherever they are put.
var badValues = []any{nil, true, -1, 0, 1.5, "", "bogus", "not a date", []any{}, []any{"x"}, []any{1.5}, map[string]any{}, map[string]any{"k": 1}}

// mutate changes one to three things in a generated file: a member of an
// item or of the top level set to a value of another type, removed or
// added, or an item replaced by a value that is no object.
func mutate(r *rand.Rand, v any, member string) {
	var top map[string]any
	var arr []any
	if member == "" {
		arr = v.([]any)
	} else {
		top = v.(map[string]any)
		arr = top[member].([]any)
	}
	for range r.IntN(3) + 1 {
		switch op := r.IntN(6); {
		case op <= 2 && len(arr) > 0:
			i := r.IntN(len(arr))
			m, ok := arr[i].(map[string]any)
			if !ok {
				continue
			}
			mutateObject(r, m)
		case op == 3 && len(arr) > 0:
			arr[r.IntN(len(arr))] = badValues[r.IntN(len(badValues))]
		case op == 4 && top != nil:
			mutateObject(r, top)
			if m, ok := top[member].([]any); ok {
				arr = m
			} else {
				// The array itself was replaced: put one back, so the
				// file still splits (the store only splits arrays).
				top[member] = arr
			}
		default:
			if len(arr) > 0 {
				if m, ok := arr[0].(map[string]any); ok {
					m["x_unknown"] = strings.Repeat("x", r.IntN(3))
				}
			}
		}
	}
}

func mutateObject(r *rand.Rand, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	switch r.IntN(3) {
	case 0:
		if len(keys) > 0 {
			delete(m, keys[r.IntN(len(keys))])
		}
	case 1:
		if len(keys) > 0 {
			m[keys[r.IntN(len(keys))]] = badValues[r.IntN(len(badValues))]
		}
	default:
		m[[]string{"x_new", "goal", "status", "id", "harness_id"}[r.IntN(5)]] = badValues[r.IntN(len(badValues))]
	}
}
