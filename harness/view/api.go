package view

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// section answers name's latest build in the envelope, through view,
// which turns the built value into what is sent.
func (s *Server) section(w http.ResponseWriter, r *http.Request, name string, view func(v any) any) {
	v, version, err := s.sections[name].get(r.Context())
	a := sectionAnswer{Version: version}
	switch {
	case err != nil:
		a.Error = err.Error()
	case v != nil:
		a.Data = view(v)
	}
	writeJSON(w, a)
}

// summary is the header of the page: counts of each section, which tell
// the reader what changed without opening a view.
type summary struct {
	Project  string            `json:"project"`
	Harness  string            `json:"harness"`
	Versions map[string]uint64 `json:"versions"`
	Errors   map[string]string `json:"errors"`
	Plan     struct {
		Exists  bool   `json:"exists"`
		Topic   string `json:"topic,omitempty"`
		Issues  int    `json:"issues"`
		Decided int    `json:"decided"`
	} `json:"plan"`
	Tasks struct {
		Total      int `json:"total"`
		Pending    int `json:"pending"`
		InProgress int `json:"in_progress"`
		Completed  int `json:"completed"`
		Ready      int `json:"ready"`
		Problems   int `json:"problems"`
	} `json:"tasks"`
	Agents struct {
		Harnesses int `json:"harnesses"`
		Running   int `json:"running"`
		Total     int `json:"total"`
	} `json:"agents"`
	Decisions struct {
		Enabled bool `json:"enabled"`
		Total   int  `json:"total"`
		Active  int  `json:"active"`
	} `json:"decisions"`
	Memory struct {
		Notes    int `json:"notes"`
		Eligible int `json:"eligible"`
	} `json:"memory"`
}

func (s *Server) summary(ctx context.Context) summary {
	var m summary
	m.Project, m.Harness, m.Errors = s.o.Layout.Project, s.o.Layout.HarnessID, map[string]string{}
	get := func(name string) any {
		v, _, err := s.sections[name].get(ctx)
		if err != nil {
			m.Errors[name] = err.Error()
			return nil
		}
		return v
	}
	if p, ok := get(secPlan).(*planData); ok {
		m.Plan.Exists, m.Plan.Topic, m.Plan.Issues, m.Plan.Decided = p.Exists, clip(p.Topic, maxShort), len(p.Issues), p.Decided
	}
	if t, ok := get(secTasks).(*tasksData); ok {
		m.Tasks.Total = len(t.g.tasks)
		m.Tasks.Pending, m.Tasks.InProgress, m.Tasks.Completed = t.counts[state.TaskPending], t.counts[state.TaskInProgress], t.counts[state.TaskCompleted]
		for _, r := range t.g.ready {
			if r {
				m.Tasks.Ready++
			}
		}
		m.Tasks.Problems = len(t.g.problems)
	}
	if a, ok := get(secAgents).(*agentsData); ok {
		m.Agents.Harnesses, m.Agents.Running = len(a.Harnesses), a.Running
		for _, h := range a.Harnesses {
			m.Agents.Total += len(h.Agents)
		}
	}
	if d, ok := get(secDecisions).(*decisionsData); ok && d.Enabled {
		m.Decisions.Enabled, m.Decisions.Total = true, len(d.x.Decisions)
		for _, r := range d.x.Decisions {
			if r.Status == "active" {
				m.Decisions.Active++
			}
		}
	}
	if d, ok := get(secMemory).(*memoryData); ok {
		m.Memory.Notes, m.Memory.Eligible = len(d.Notes), len(d.Eligible)
	}
	get(secHistory)
	m.Versions = s.versions()
	return m
}

func (s *Server) apiSummary(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.summary(r.Context()))
}

func (s *Server) apiPlan(w http.ResponseWriter, r *http.Request) {
	s.section(w, r, secPlan, func(v any) any { return v })
}

// apiHistory lists past cycles: the latest ones from the section's build,
// or a search (nx_history_search's text match, run on demand).
func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	n := intParam(r, "n", historyDefault, 1, 200)
	if q == "" && n == historyDefault {
		s.section(w, r, secHistory, func(v any) any { return v.(*historyData).Result })
		return
	}
	_, version, _ := s.sections[secHistory].get(r.Context())
	res, err := s.o.History(s.store, clip(q, 1000), int64(n))
	a := sectionAnswer{Version: version, Data: res}
	if err != nil {
		a.Error, a.Data = err.Error(), nil
	}
	writeJSON(w, a)
}

// taskRow is one row of the task table.
type taskRow struct {
	ID      int64   `json:"id"`
	Title   string  `json:"title"`
	Status  string  `json:"status"`
	Owner   string  `json:"owner,omitempty"`
	Deps    []int64 `json:"deps"`
	Issue   *int64  `json:"plan_issue,omitempty"`
	Depth   int     `json:"depth"`
	Ready   bool    `json:"ready"`
	Problem string  `json:"problem,omitempty"`
}

type taskPage struct {
	Exists  bool      `json:"exists"`
	Goal    string    `json:"goal,omitempty"`
	Total   int       `json:"total"`
	Matched int       `json:"matched"`
	Offset  int       `json:"offset"`
	Rows    []taskRow `json:"rows"`
}

// apiTasks is a page of the table (offset, limit ≤ 500), filtered by q
// (id, title, owner) and status ("ready" for the ready set, "problem").
func (s *Server) apiTasks(w http.ResponseWriter, r *http.Request) {
	q, status := lowerQuery(r.URL.Query().Get("q")), r.URL.Query().Get("status")
	off, limit := intParam(r, "offset", 0, 0, 1<<30), intParam(r, "limit", 50, 1, 500)
	s.section(w, r, secTasks, func(v any) any {
		d := v.(*tasksData)
		p := taskPage{Exists: d.Exists, Goal: d.Goal, Total: len(d.g.tasks), Offset: off, Rows: []taskRow{}}
		for i := range d.g.tasks {
			t := &d.g.tasks[i]
			_, bad := d.g.problems[i]
			switch {
			case status == "ready" && !d.g.ready[i], status == "problem" && !bad,
				status != "" && status != "ready" && status != "problem" && t.Status != status,
				q != "" && !matchTask(t, q):
				continue
			}
			p.Matched++
			if p.Matched <= off || len(p.Rows) >= limit {
				continue
			}
			deps := t.Deps
			if deps == nil {
				deps = []int64{}
			}
			p.Rows = append(p.Rows, taskRow{ID: t.ID, Title: clip(t.Title, maxTitle), Status: t.Status, Owner: clip(deref(t.Owner), maxShort),
				Deps: deps[:min(len(deps), 100)], Issue: t.PlanIssue, Depth: d.g.depth[i], Ready: d.g.ready[i], Problem: d.g.problems[i]})
		}
		return p
	})
}

// apiGraph is the graph view's window (graph.go): mode focus or all, a
// filter, at most max tasks (≤ 2000).
func (s *Server) apiGraph(w http.ResponseWriter, r *http.Request) {
	q := lowerQuery(r.URL.Query().Get("q"))
	mode := r.URL.Query().Get("mode")
	if mode != "all" {
		mode = "focus"
	}
	limit := intParam(r, "max", 300, 1, 2000)
	s.section(w, r, secTasks, func(v any) any { return v.(*tasksData).g.window(mode, q, limit) })
}

func (s *Server) apiAgents(w http.ResponseWriter, r *http.Request) {
	s.section(w, r, secAgents, func(v any) any {
		return struct {
			*agentsData
			Now string `json:"now"`
		}{v.(*agentsData), state.Format(time.Now())}
	})
}

type decisionPage struct {
	Enabled  bool             `json:"enabled"`
	Store    string           `json:"store,omitempty"`
	Total    int              `json:"total"`
	Matched  int              `json:"matched"`
	Offset   int              `json:"offset"`
	Rows     []DecisionRecord `json:"rows"`
	Problems any              `json:"problems,omitempty"`
}

// apiDecisions is a page of the decision table, filtered by q (number or
// title) and status.
func (s *Server) apiDecisions(w http.ResponseWriter, r *http.Request) {
	q, status := lowerQuery(r.URL.Query().Get("q")), r.URL.Query().Get("status")
	off, limit := intParam(r, "offset", 0, 0, 1<<30), intParam(r, "limit", 50, 1, 500)
	s.section(w, r, secDecisions, func(v any) any {
		d := v.(*decisionsData)
		p := decisionPage{Enabled: d.Enabled, Offset: off, Rows: []DecisionRecord{}}
		if !d.Enabled {
			return p
		}
		p.Store, p.Total, p.Problems = d.x.Store, len(d.x.Decisions), d.x.Problems
		num := strings.TrimLeft(strings.TrimPrefix(q, "d"), "0")
		for _, x := range d.x.Decisions {
			if status != "" && x.Status != status {
				continue
			}
			if q != "" && !containsFold(x.Title, q) && (num == "" || !isDigits(num) || strings.TrimLeft(itoa(x.Number), "0") != num) {
				continue
			}
			p.Matched++
			if p.Matched <= off || len(p.Rows) >= limit {
				continue
			}
			p.Rows = append(p.Rows, x)
		}
		return p
	})
}

// maxCheckInput bounds a check's request body; the store itself refuses
// an approach or context over 5,000 characters.
const maxCheckInput = 64 << 10

// apiCheck answers check_decision for the posted approach: exactly what
// `nexus decision check` prints. The body must be JSON (a cross-site form
// cannot send that without a preflight, which nothing here answers).
func (s *Server) apiCheck(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		refuse(w, http.StatusUnsupportedMediaType, "the check takes a JSON body")
		return
	}
	if s.o.Decisions == nil {
		writeJSON(w, map[string]string{"error": "the decision store is turned off (decisions.enabled: false)"})
		return
	}
	var in struct {
		Approach string `json:"approach"`
		Context  string `json:"context"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxCheckInput)).Decode(&in); err != nil {
		refuse(w, http.StatusBadRequest, "the check takes {\"approach\": ..., \"context\": ...}")
		return
	}
	if strings.TrimSpace(in.Approach) == "" {
		writeJSON(w, map[string]string{"error": "type an approach to check"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	ans, err := s.o.Decisions.Check(ctx, in.Approach, in.Context)
	if err != nil {
		writeJSON(w, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, map[string]string{"answer": ans})
}

func (s *Server) apiMemory(w http.ResponseWriter, r *http.Request) {
	s.section(w, r, secMemory, func(v any) any { return v })
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
