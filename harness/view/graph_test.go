package view

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

func task(id int64, status string, deps ...int64) state.Task {
	return state.Task{ID: id, Title: fmt.Sprint("task ", id), Status: status, Deps: deps}
}

func TestGraphLayout(t *testing.T) {
	P, I, C := state.TaskPending, state.TaskInProgress, state.TaskCompleted
	for _, tc := range []struct {
		name     string
		tasks    []state.Task
		depth    map[int64]int
		ready    []int64
		cycles   [][]int64
		missing  []missingDep
		dupes    []int64
		problems map[int64]string // substring of each task's problem
	}{
		{name: "empty", depth: map[int64]int{}},
		{name: "chain", tasks: []state.Task{task(1, C), task(2, P, 1), task(3, P, 2)},
			depth: map[int64]int{1: 0, 2: 1, 3: 2}, ready: []int64{2}},
		{name: "diamond: depth is the longest chain", tasks: []state.Task{task(1, C), task(2, C, 1), task(3, P, 1, 2), task(4, P, 3, 1)},
			depth: map[int64]int{1: 0, 2: 1, 3: 2, 4: 3}, ready: []int64{3}},
		{name: "order in the file does not matter", tasks: []state.Task{task(3, P, 2), task(2, P, 1), task(1, I)},
			depth: map[int64]int{1: 0, 2: 1, 3: 2}},
		{name: "cycle", tasks: []state.Task{task(1, C), task(2, P, 1, 3), task(3, P, 2), task(4, P, 3)},
			depth: map[int64]int{1: 0, 2: 1, 3: 1, 4: 2}, cycles: [][]int64{{2, 3}},
			problems: map[int64]string{2: "cycle: #2, #3", 3: "cycle: #2, #3"}},
		{name: "self-dependency", tasks: []state.Task{task(1, P, 1)},
			depth: map[int64]int{1: 0}, cycles: [][]int64{{1}}, problems: map[int64]string{1: "cycle: #1"}},
		{name: "missing dependency", tasks: []state.Task{task(1, P, 99), task(2, P)},
			depth: map[int64]int{1: 0, 2: 0}, ready: []int64{2}, missing: []missingDep{{1, 99}},
			problems: map[int64]string{1: "missing dependency #99"}},
		{name: "duplicate id: the last one counts, as in task_list", tasks: []state.Task{task(1, C), task(1, P), task(2, P, 1)},
			depth: map[int64]int{1: 0, 2: 1}, ready: []int64{1}, dupes: []int64{1}, problems: map[int64]string{1: "duplicate id #1"}},
		{name: "repeated dependency", tasks: []state.Task{task(1, C), task(2, P, 1, 1)},
			depth: map[int64]int{1: 0, 2: 1}, ready: []int64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := buildGraph(tc.tasks)
			for i, x := range tc.tasks {
				if g.index[x.ID] != i {
					continue // a duplicate
				}
				if d, ok := tc.depth[x.ID]; ok && g.depth[i] != d {
					t.Errorf("depth of #%d = %d, want %d", x.ID, g.depth[i], d)
				}
			}
			var ready []int64
			for i, r := range g.ready {
				if r {
					ready = append(ready, tc.tasks[i].ID)
				}
			}
			if !reflect.DeepEqual(ready, tc.ready) {
				t.Errorf("ready %v, want %v", ready, tc.ready)
			}
			if !reflect.DeepEqual(g.cycles, tc.cycles) {
				t.Errorf("cycles %v, want %v", g.cycles, tc.cycles)
			}
			if !reflect.DeepEqual(g.missing, tc.missing) {
				t.Errorf("missing %v, want %v", g.missing, tc.missing)
			}
			if !reflect.DeepEqual(g.dupes, tc.dupes) {
				t.Errorf("duplicates %v, want %v", g.dupes, tc.dupes)
			}
			for id, want := range tc.problems {
				if got := g.problems[g.index[id]]; !strings.Contains(got, want) {
					t.Errorf("problem of #%d = %q, want %q in it", id, got, want)
				}
			}
			w := g.window("all", "", 1000)
			if w.Shown != len(tc.tasks) {
				t.Errorf("window shows %d of %d", w.Shown, len(tc.tasks))
			}
		})
	}
}

// A chain of 10,000 tasks (the deepest graph of that size) and a
// 10,000-task cycle are laid out without recursion.
func TestGraphLarge(t *testing.T) {
	const n = 10000
	chain := make([]state.Task, n)
	for i := range chain {
		chain[i] = task(int64(i+1), state.TaskPending)
		if i > 0 {
			chain[i].Deps = []int64{int64(i)}
		}
	}
	g := buildGraph(chain)
	if g.maxDepth != n-1 || g.depth[n-1] != n-1 {
		t.Fatalf("max depth %d", g.maxDepth)
	}
	chain[0].Deps = []int64{n}
	g = buildGraph(chain)
	if len(g.cycles) != 1 || len(g.cycles[0]) != n {
		t.Fatalf("cycles: %d", len(g.cycles))
	}
	// The focus window is bounded whatever the graph.
	w := g.window("all", "", 300)
	if w.Shown != 300 || !w.Truncated || w.Total != n {
		t.Errorf("window: shown %d truncated %v", w.Shown, w.Truncated)
	}
}

func TestGraphWindow(t *testing.T) {
	P, I, C := state.TaskPending, state.TaskInProgress, state.TaskCompleted
	tasks := []state.Task{task(1, C), task(2, C, 1), task(3, P, 2), task(4, P, 3), task(5, I, 1), task(6, P, 5), task(7, P, 6)}
	tasks[3].Owner = state.Ptr("engineer")
	g := buildGraph(tasks)
	w := g.window("focus", "", 100)
	ids := func(w graphWindow) []int64 {
		var out []int64
		for _, n := range w.Nodes {
			out = append(out, n.ID)
		}
		return out
	}
	// Ready #3 and in-progress #5 with their neighbours (#2, #4; #1, #6),
	// not #7; columns compressed; rows by id within a column.
	if got := ids(w); !reflect.DeepEqual(got, []int64{1, 2, 5, 3, 6, 4}) {
		t.Errorf("focus window %v", got)
	}
	for _, n := range w.Nodes {
		if n.ID == 6 && (n.HiddenUsers != 1 || n.Column != 2) {
			t.Errorf("node 6: %+v", n)
		}
		if n.ID == 2 && n.Row != 0 || n.ID == 5 && n.Row != 1 {
			t.Errorf("rows: %+v", n)
		}
	}
	if w.Ready != 1 || w.Matched != 2 {
		t.Errorf("ready %d matched %d", w.Ready, w.Matched)
	}
	if got := ids(g.window("focus", "engineer", 100)); !reflect.DeepEqual(got, []int64{3, 4}) {
		t.Errorf("filtered by owner: %v", got)
	}
	if got := ids(g.window("focus", "#7", 100)); !reflect.DeepEqual(got, []int64{6, 7}) {
		t.Errorf("filtered by id: %v", got)
	}
	if n := len(g.window("all", "", 100).Edges); n != 6 {
		t.Errorf("%d edges, want 6", n)
	}
}

func TestClip(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "abcdef": "abcd…", "ééééé": "éééé…", "éé": "éé"} {
		if got := clip(in, 4); got != want {
			t.Errorf("clip(%q) = %q, want %q", in, got, want)
		}
	}
}

// A ready set larger than the window keeps half the room for where it
// leads: 1,000 ready tasks, each with one dependent, in a window of 100.
func TestGraphWindowLargeReadySet(t *testing.T) {
	var tasks []state.Task
	for i := int64(1); i <= 1000; i++ {
		tasks = append(tasks, task(i, state.TaskPending), task(1000+i, state.TaskPending, i))
	}
	w := buildGraph(tasks).window("focus", "", 100)
	ready, users := 0, 0
	for _, n := range w.Nodes {
		if n.Ready {
			ready++
		} else {
			users++
		}
	}
	if ready != 50 || users != 50 || !w.Truncated || len(w.Edges) != 50 || w.Columns != 2 {
		t.Errorf("ready %d, dependents %d, edges %d, columns %d, truncated %v", ready, users, len(w.Edges), w.Columns, w.Truncated)
	}
}
