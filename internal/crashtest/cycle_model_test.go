package crashtest

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
)

// cycleModel is what plan.json, tasks.json and history.json must hold
// after a sequence of acknowledged plan_start / task_add / task_update /
// task_close calls. It is written from the nexus-core tool contracts, not
// from nexus's code, and compared with the disk through fingerprints that
// leave out timestamps and the branch.
type cycleModel struct {
	plan    *mPlan
	tasks   *mTasks
	history []string // cycle fingerprints; nil = no history.json
}

type mPlan struct {
	id     int64
	topic  string
	issues []string // "id:title:status"
}

type mTasks struct {
	goal  string
	tasks []mTask
}

type mTask struct {
	id            int64
	title, status string
}

func (p *mPlan) fp() string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%d|%s|%s", p.id, p.topic, strings.Join(p.issues, ","))
}

func (t *mTasks) fp() string {
	if t == nil {
		return "none"
	}
	var b strings.Builder
	b.WriteString(t.goal)
	for _, x := range t.tasks {
		fmt.Fprintf(&b, "|%d:%s:%s", x.id, x.title, x.status)
	}
	return b.String()
}

func historyFP(h []string) string {
	if h == nil {
		return "none"
	}
	return fmt.Sprintf("%d cycles\n%s", len(h), strings.Join(h, "\n"))
}

func cycleFP(p *mPlan, t *mTasks) string {
	var tasks []mTask
	if t != nil {
		tasks = t.tasks
	}
	return "plan " + p.fp() + " tasks " + (&mTasks{tasks: tasks}).fp()
}

// fps are the three files' fingerprints in the order nexus commits them
// (history, plan, tasks).
type fps [3]string

func (m *cycleModel) fps() fps {
	return fps{historyFP(m.history), m.plan.fp(), m.tasks.fp()}
}

// modelOf reads the model back from an inspected tree.
func modelOf(s *snapshot) *cycleModel {
	m := &cycleModel{plan: planOf(s.Plan), tasks: tasksOf(s.Tasks)}
	if s.History != nil {
		m.history = []string{}
		for _, c := range s.History {
			var t *mTasks
			if len(c.Tasks) > 0 {
				t = &mTasks{tasks: tasksOf(&state.Tasks{Tasks: c.Tasks}).tasks}
			}
			m.history = append(m.history, cycleFP(planOf(c.Plan), t))
		}
	}
	return m
}

func planOf(p *state.Plan) *mPlan {
	if p == nil {
		return nil
	}
	out := &mPlan{id: p.ID, topic: p.Topic}
	for _, is := range p.Issues {
		out.issues = append(out.issues, fmt.Sprintf("%d:%s:%s", is.ID, is.Title, is.Status))
	}
	return out
}

func tasksOf(t *state.Tasks) *mTasks {
	if t == nil {
		return nil
	}
	out := &mTasks{goal: t.Goal}
	for _, x := range t.Tasks {
		out.tasks = append(out.tasks, mTask{x.ID, x.Title, x.Status})
	}
	return out
}

// op is one tool call and the files it changes, in commit order.
type op struct {
	tool string
	args map[string]any
	// steps are the fingerprints after each file the call commits, in
	// the order the store commits them: a process killed mid-call leaves
	// the disk at one of these steps (or before the first).
	steps []fps
	after *cycleModel
}

func (m *cycleModel) clone() *cycleModel {
	c := &cycleModel{}
	if m.plan != nil {
		p := *m.plan
		p.issues = append([]string(nil), p.issues...)
		c.plan = &p
	}
	if m.tasks != nil {
		t := *m.tasks
		t.tasks = append([]mTask(nil), t.tasks...)
		c.tasks = &t
	}
	if m.history != nil {
		c.history = append([]string{}, m.history...)
	}
	return c
}

// next picks a random valid call (seq makes names unique) and what it does.
func (m *cycleModel) next(rng *rand.Rand, seq int) *op {
	r := rng.Intn(100)
	switch {
	case r < 12:
		return m.planStart(fmt.Sprintf("topic %d", seq), []string{fmt.Sprintf("issue %d-a", seq), fmt.Sprintf("issue %d-b", seq)})
	case r < 20 && (m.plan != nil || m.tasks != nil):
		return m.taskClose()
	case r < 55 && m.tasks != nil && len(m.tasks.tasks) > 0:
		t := m.tasks.tasks[rng.Intn(len(m.tasks.tasks))]
		status := []string{state.TaskPending, state.TaskInProgress, state.TaskCompleted}[rng.Intn(3)]
		return m.taskUpdate(t.id, status)
	default:
		goal := ""
		if rng.Intn(4) == 0 {
			goal = fmt.Sprintf("goal %d", seq)
		}
		return m.taskAdd(fmt.Sprintf("task %d \u2014 \"quoted\" <&>", seq), goal)
	}
}

func maxPlanID(history []string) int64 {
	var id int64
	for _, c := range history {
		var n int64
		if _, err := fmt.Sscanf(c, "plan %d|", &n); err == nil {
			id = max(id, n)
		}
	}
	return id
}

func (m *cycleModel) planStart(topic string, issues []string) *op {
	a := m.clone()
	o := &op{tool: "nx_plan_start", args: map[string]any{"topic": topic, "issues": issues, "research_summary": "research for " + topic}}
	id := maxPlanID(a.history)
	if a.plan != nil {
		if a.history == nil {
			a.history = []string{}
		}
		a.history = append(a.history, cycleFP(a.plan, nil))
		id = max(id, a.plan.id)
		o.steps = append(o.steps, fps{historyFP(a.history), m.plan.fp(), m.tasks.fp()})
	}
	a.plan = &mPlan{id: id + 1, topic: topic}
	for i, title := range issues {
		a.plan.issues = append(a.plan.issues, fmt.Sprintf("%d:%s:%s", i+1, title, state.IssuePending))
	}
	o.steps = append(o.steps, a.fps())
	o.after = a
	return o
}

func (m *cycleModel) taskAdd(title, goal string) *op {
	a := m.clone()
	args := map[string]any{"title": title, "context": "context of " + title}
	if a.tasks == nil {
		a.tasks = &mTasks{}
	}
	var id int64
	for _, t := range a.tasks.tasks {
		id = max(id, t.id)
	}
	a.tasks.tasks = append(a.tasks.tasks, mTask{id + 1, title, state.TaskPending})
	if goal != "" {
		args["goal"] = goal
		a.tasks.goal = goal
	}
	return &op{tool: "nx_task_add", args: args, steps: []fps{a.fps()}, after: a}
}

func (m *cycleModel) taskUpdate(id int64, status string) *op {
	a := m.clone()
	for i := range a.tasks.tasks {
		if a.tasks.tasks[i].id == id {
			a.tasks.tasks[i].status = status
		}
	}
	return &op{tool: "nx_task_update", args: map[string]any{"id": id, "status": status}, steps: []fps{a.fps()}, after: a}
}

// taskClose appends the cycle, then deletes plan.json, then tasks.json.
func (m *cycleModel) taskClose() *op {
	a := m.clone()
	if a.history == nil {
		a.history = []string{}
	}
	a.history = append(a.history, cycleFP(m.plan, m.tasks))
	o := &op{tool: "nx_task_close", args: map[string]any{}}
	o.steps = append(o.steps, fps{historyFP(a.history), m.plan.fp(), m.tasks.fp()})
	a.plan = nil
	if m.plan != nil {
		o.steps = append(o.steps, fps{historyFP(a.history), "none", m.tasks.fp()})
	}
	a.tasks = nil
	if m.tasks != nil {
		o.steps = append(o.steps, a.fps())
	}
	o.after = a
	return o
}
