package view

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
)

// taskGraph is the dependency graph of tasks.json as the page draws it:
// each task's column (its dependency depth), the ready set, and what is
// wrong with the graph (cycles, missing dependencies, duplicate ids). A
// broken graph is laid out anyway: the problems are reported, never a
// reason to fail.
type taskGraph struct {
	tasks []state.Task
	// index of the first task with each id; a later task with the same
	// id is a problem and is reached by position only.
	index map[int64]int
	// deps[i] and users[i] are positions: task i depends on deps[i],
	// users[i] depend on task i (edges to missing ids are left out).
	deps, users [][]int
	depth       []int
	ready       []bool
	// cycle[i] is the cycle task i belongs to (index into cycles), or -1.
	cycle    []int
	cycles   [][]int64
	missing  []missingDep
	dupes    []int64
	problems map[int]string // position → what is wrong with that task
	maxDepth int
}

type missingDep struct {
	Task int64 `json:"task"`
	Dep  int64 `json:"dep"`
}

// buildGraph lays out tasks. Depth is the longest chain of dependencies
// below a task (0 for a task without any); every task of a cycle gets the
// same depth, one more than the deepest task the cycle depends on. The
// work is linear in tasks and edges, iterative (a chain of 10,000 tasks
// must not exhaust the stack).
func buildGraph(tasks []state.Task) *taskGraph {
	n := len(tasks)
	g := &taskGraph{tasks: tasks, index: make(map[int64]int, n), deps: make([][]int, n), users: make([][]int, n),
		depth: make([]int, n), ready: make([]bool, n), cycle: make([]int, n), problems: map[int]string{}}
	// A repeated id names its last task, as task_list's ready set reads
	// it; every task with that id is marked.
	for i, t := range tasks {
		if j, dup := g.index[t.ID]; dup {
			if !slices.Contains(g.dupes, t.ID) {
				g.dupes = append(g.dupes, t.ID)
				g.addProblem(j, "duplicate id #"+strconv.FormatInt(t.ID, 10))
			}
			g.addProblem(i, "duplicate id #"+strconv.FormatInt(t.ID, 10))
		}
		g.index[t.ID] = i
	}
	for i, t := range tasks {
		seen := map[int]bool{}
		for _, d := range t.Deps {
			j, ok := g.index[d]
			if !ok {
				g.missing = append(g.missing, missingDep{Task: t.ID, Dep: d})
				g.addProblem(i, "missing dependency #"+strconv.FormatInt(d, 10))
				continue
			}
			if seen[j] {
				continue
			}
			seen[j] = true
			g.deps[i] = append(g.deps[i], j)
			g.users[j] = append(g.users[j], i)
		}
	}
	comp := g.components()
	g.layer(comp)
	// The ready set as task_list defines it: pending tasks whose deps
	// are all completed (an unknown dep is not completed).
	for i, t := range tasks {
		if t.Status != state.TaskPending {
			continue
		}
		ok := true
		for _, d := range t.Deps {
			j, found := g.index[d]
			if !found || tasks[j].Status != state.TaskCompleted {
				ok = false
				break
			}
		}
		g.ready[i] = ok
	}
	return g
}

func (g *taskGraph) addProblem(i int, p string) {
	if old, ok := g.problems[i]; ok {
		p = old + "; " + p
	}
	g.problems[i] = p
}

// components finds the strongly connected components (Tarjan's algorithm
// with an explicit stack) and records every cycle: a component of more
// than one task, or a task that depends on itself.
func (g *taskGraph) components() []int {
	n := len(g.tasks)
	const unvisited = -1
	idx, low, comp := make([]int, n), make([]int, n), make([]int, n)
	for i := range idx {
		idx[i], comp[i], g.cycle[i] = unvisited, unvisited, -1
	}
	onStack := make([]bool, n)
	var stack []int
	type frame struct{ v, next int }
	counter, ncomp := 0, 0
	for root := range n {
		if idx[root] != unvisited {
			continue
		}
		call := []frame{{root, 0}}
		idx[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.next < len(g.deps[f.v]) {
				w := g.deps[f.v][f.next]
				f.next++
				if idx[w] == unvisited {
					idx[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], idx[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != idx[v] {
				continue
			}
			var members []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				members = append(members, w)
				if w == v {
					break
				}
			}
			if len(members) > 1 || slices.Contains(g.deps[v], v) {
				ids := make([]int64, len(members))
				for k, m := range members {
					ids[k] = g.tasks[m].ID
				}
				slices.Sort(ids)
				c := len(g.cycles)
				g.cycles = append(g.cycles, ids)
				text := "in a dependency cycle: " + joinIDs(ids)
				for _, m := range members {
					g.cycle[m] = c
					g.addProblem(m, text)
				}
			}
			ncomp++
		}
	}
	return comp
}

// layer gives every task its depth over the graph of components, in
// topological order (Tarjan numbers components in reverse topological
// order of the dependency edges: a component's dependencies come first).
func (g *taskGraph) layer(comp []int) {
	ncomp := 0
	for _, c := range comp {
		ncomp = max(ncomp, c+1)
	}
	members := make([][]int, ncomp)
	for i, c := range comp {
		members[c] = append(members[c], i)
	}
	cdepth := make([]int, ncomp)
	for c := range ncomp {
		d := 0
		for _, v := range members[c] {
			for _, w := range g.deps[v] {
				if comp[w] != c {
					d = max(d, cdepth[comp[w]]+1)
				}
			}
		}
		cdepth[c] = d
		for _, v := range members[c] {
			g.depth[v] = d
		}
		g.maxDepth = max(g.maxDepth, d)
	}
}

func joinIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('#')
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// graphNode is one task as the graph view draws it.
type graphNode struct {
	ID      int64  `json:"id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	Owner   string `json:"owner,omitempty"`
	Depth   int    `json:"depth"`
	Column  int    `json:"col"`
	Row     int    `json:"row"`
	Ready   bool   `json:"ready"`
	Problem string `json:"problem,omitempty"`
	// HiddenDeps and HiddenUsers count the neighbours not shown.
	HiddenDeps  int `json:"hidden_deps,omitempty"`
	HiddenUsers int `json:"hidden_users,omitempty"`
}

type graphWindow struct {
	Total     int          `json:"total"`
	Shown     int          `json:"shown"`
	Matched   int          `json:"matched"`
	Truncated bool         `json:"truncated"`
	Mode      string       `json:"mode"`
	Nodes     []graphNode  `json:"nodes"`
	Edges     [][2]int64   `json:"edges"` // [dep, task]
	Cycles    [][]int64    `json:"cycles"`
	Missing   []missingDep `json:"missing"`
	Dupes     []int64      `json:"duplicates"`
	Columns   int          `json:"columns"`
	Ready     int          `json:"ready"`
}

// window picks what the graph view shows, at most max tasks: in "focus"
// mode the ready set, the tasks in progress and the tasks with a problem;
// in "all" mode every task; with a query, the tasks it matches. Each is
// shown with its direct dependencies and dependents while room remains.
// Columns are the depths that have a shown task, left to right; rows
// order a column's tasks by id.
func (g *taskGraph) window(mode, query string, limit int) graphWindow {
	w := graphWindow{Total: len(g.tasks), Mode: mode, Cycles: g.cycles, Missing: g.missing, Dupes: g.dupes,
		Nodes: []graphNode{}, Edges: [][2]int64{}}
	if w.Cycles == nil {
		w.Cycles = [][]int64{}
	}
	if w.Missing == nil {
		w.Missing = []missingDep{}
	}
	if w.Dupes == nil {
		w.Dupes = []int64{}
	}
	for _, r := range g.ready {
		if r {
			w.Ready++
		}
	}
	// Seeds in order of interest, so a cut keeps the most useful: the
	// ready set first, then the tasks with a problem, then those in
	// progress (a filter or "all" keeps the file's order).
	var seeds, problems, running []int
	for i, t := range g.tasks {
		_, bad := g.problems[i]
		switch {
		case query != "":
			if matchTask(&t, query) {
				seeds = append(seeds, i)
			}
		case mode == "all", g.ready[i]:
			seeds = append(seeds, i)
		case bad:
			problems = append(problems, i)
		case t.Status == state.TaskInProgress:
			running = append(running, i)
		}
	}
	seeds = append(append(seeds, problems...), running...)
	w.Matched = len(seeds)
	shown := make(map[int]bool, min(len(seeds), limit))
	var order []int
	add := func(i int) bool {
		if shown[i] {
			return true
		}
		if len(order) >= limit {
			w.Truncated = true
			return false
		}
		shown[i] = true
		order = append(order, i)
		return true
	}
	// Half the room at most for the seeds first, then their direct
	// neighbours, then more seeds: a large ready set still shows where
	// it leads.
	first := len(seeds)
	withNeighbours := mode != "all" || query != ""
	if withNeighbours {
		first = min(first, max(limit/2, 1))
	}
	for _, i := range seeds[:first] {
		add(i)
	}
	if withNeighbours {
		for _, i := range seeds[:first] {
			for _, j := range g.deps[i] {
				add(j)
			}
			for _, j := range g.users[i] {
				add(j)
			}
		}
	}
	for _, i := range seeds[first:] {
		if !add(i) {
			break
		}
	}
	// Columns: the depths present, compressed left to right.
	depths := map[int]bool{}
	for _, i := range order {
		depths[g.depth[i]] = true
	}
	cols := make([]int, 0, len(depths))
	for d := range depths {
		cols = append(cols, d)
	}
	slices.Sort(cols)
	colOf := make(map[int]int, len(cols))
	for c, d := range cols {
		colOf[d] = c
	}
	w.Columns = len(cols)
	slices.SortFunc(order, func(a, b int) int {
		if da, db := g.depth[a], g.depth[b]; da != db {
			return da - db
		}
		if g.tasks[a].ID != g.tasks[b].ID {
			if g.tasks[a].ID < g.tasks[b].ID {
				return -1
			}
			return 1
		}
		return a - b
	})
	rows := map[int]int{}
	for _, i := range order {
		t := &g.tasks[i]
		n := graphNode{ID: t.ID, Title: clip(t.Title, maxTitle), Status: t.Status, Owner: clip(deref(t.Owner), maxShort),
			Depth: g.depth[i], Column: colOf[g.depth[i]], Ready: g.ready[i], Problem: g.problems[i]}
		n.Row = rows[n.Column]
		rows[n.Column]++
		for _, j := range g.deps[i] {
			if shown[j] {
				w.Edges = append(w.Edges, [2]int64{g.tasks[j].ID, t.ID})
			} else {
				n.HiddenDeps++
			}
		}
		for _, j := range g.users[i] {
			if !shown[j] {
				n.HiddenUsers++
			}
		}
		w.Nodes = append(w.Nodes, n)
	}
	w.Shown = len(w.Nodes)
	return w
}

// matchTask is the filter of the graph and the table: a case-insensitive
// match of the id ("#12" or "12"), title, status or owner.
func matchTask(t *state.Task, q string) bool {
	if id, ok := strings.CutPrefix(q, "#"); ok || isDigits(q) {
		return strconv.FormatInt(t.ID, 10) == id
	}
	return containsFold(t.Title, q) || strings.EqualFold(t.Status, q) || containsFold(deref(t.Owner), q)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains q (already lower-cased),
// ignoring case.
func containsFold(s, q string) bool {
	if q == "" {
		return true
	}
	return strings.Contains(strings.ToLower(s), q)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
