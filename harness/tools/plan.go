package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/internal/state"
)

// Contract error messages (digest §2.3, §2.4). They are compared exactly.
const (
	errNoPlan        = "No active plan session"
	errUnknownAction = "Unknown action"
)

func errIssueNotFound(id int64) error { return Errorf("Issue " + itoa(id) + " not found") }

func planStart() *Tool {
	return &Tool{
		Name: "plan_start",
		Description: "Start a planning session: write .nexus/state/plan.json with the topic and one pending issue per agenda item. " +
			"An active plan is archived to .nexus/history.json first. research_summary is required: research comes before planning.",
		Params:      params("plan_start"),
		Annotations: Annotations{Title: "Start a plan", Destructive: true, Idempotent: false, OpenWorld: false},
		Handle:      Object(runPlanStart),
	}
}

func runPlanStart(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	topic, _ := str(args, "topic")
	agenda, _ := strList(args, "issues")
	summary, _ := str(args, "research_summary")
	s := env.Store
	var planID int64
	archived := false
	err := s.Update(ctx, []string{s.L.HistoryPath(), s.L.PlanPath()}, func(tx *state.Tx) error {
		maxID, err := env.results.maxPlanID(s)
		if err != nil {
			return err
		}
		old, ok, err := tx.Plan()
		if err != nil {
			return err
		}
		if ok {
			cycle, err := newCycle(s.Timestamp(), env.branch(), old, nil)
			if err != nil {
				return err
			}
			if _, err := tx.AppendCycle(cycle); err != nil {
				return err
			}
			archived = true
			maxID = max(maxID, old.ID)
		}
		planID = maxID + 1
		issues := make([]state.Issue, len(agenda))
		for i, title := range agenda {
			issues[i] = state.Issue{ID: int64(i + 1), Title: title, Status: state.IssuePending}
		}
		return tx.PutPlan(&state.Plan{
			SchemaVersion:   state.SchemaVersion,
			ID:              planID,
			Topic:           topic,
			Issues:          issues,
			ResearchSummary: &summary,
			CreatedAt:       s.Timestamp(),
		})
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"created":          true,
		"plan_id":          planID,
		"topic":            topic,
		"issueCount":       len(agenda),
		"previousArchived": archived,
	}, nil
}

// maxPlanID is the largest plan id archived in history (0 when none).
// Cycles are read leniently: foreign or legacy records are skipped, never
// rejected.
// maxPlanID returns the largest plan id archived in history.json (0 when
// none), reading only the cycles appended since the last call
// (state.ReadHistorySince). Called with the history lock held.
func (c *resultCache) maxPlanID(s *state.Store) (int64, error) {
	c.historyMu.Lock()
	defer c.historyMu.Unlock()
	maxID := c.planIDs.max
	mark, err := s.ReadHistorySince(c.planIDs.mark, func() { maxID = 0 }, func(raw []byte) error {
		maxID = max(maxID, cyclePlanID(raw))
		return nil
	})
	if err != nil {
		c.planIDs.mark, c.planIDs.max = state.HistoryMark{}, 0
		return 0, err
	}
	c.planIDs.mark, c.planIDs.max = mark, maxID
	return maxID, nil
}

// cyclePlanID is the id of a cycle's plan (0 when it has none or it is
// not a number).
func cyclePlanID(raw []byte) int64 {
	var c struct {
		Plan *struct {
			ID any `json:"id"`
		} `json:"plan"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Plan == nil {
		return 0
	}
	if f, ok := c.Plan.ID.(float64); ok && f > 0 {
		return int64(f)
	}
	return 0
}

// newCycle builds the history record of a closed plan/task cycle. The
// archived plan and tasks are copied without members the history schema
// does not declare (a plan's schema_version, digest C14): a cycle is closed
// and must validate, so anything else would make archiving impossible.
func newCycle(now, branch string, p *state.Plan, tasks []state.Task) (state.Cycle, error) {
	c := state.Cycle{
		SchemaVersion: state.SchemaVersion,
		CompletedAt:   now,
		Branch:        branch,
		Plan:          jsontext.Value("null"),
		Tasks:         make([]state.Task, len(tasks)),
	}
	for i, t := range tasks {
		t.Extra = nil
		c.Tasks[i] = t
	}
	if p != nil {
		cp := *p
		cp.SchemaVersion = ""
		cp.Extra = nil
		cp.Issues = make([]state.Issue, len(p.Issues))
		for i, is := range p.Issues {
			is.Extra = nil
			cp.Issues[i] = is
		}
		raw, err := state.MarshalCompact(&cp)
		if err != nil {
			return c, fmt.Errorf("encode archived plan: %w", err)
		}
		c.Plan = raw
	}
	return c, nil
}

func planStatus() *Tool {
	return &Tool{
		Name:        "plan_status",
		Description: "Show the active planning session: topic, every issue with its decision, and pending/decided counts. Returns {\"active\": false} when no plan is active.",
		Params:      params("plan_status"),
		Annotations: withTitle(readOnly, "Plan status"),
		Handle:      Object(runPlanStatus),
	}
}

func runPlanStatus(_ context.Context, env *Env, _ map[string]any) (map[string]any, error) {
	p, ok, err := env.Store.ReadPlan()
	if err != nil {
		return nil, err
	}
	if !ok {
		return map[string]any{"active": false}, nil
	}
	pending, decided := 0, 0
	for _, is := range p.Issues {
		switch is.Status {
		case state.IssuePending:
			pending++
		case state.IssueDecided:
			decided++
		}
	}
	out := map[string]any{
		"active":  true,
		"plan_id": p.ID,
		"topic":   p.Topic,
		"issues":  p.Issues,
		"summary": map[string]any{"total": len(p.Issues), "pending": pending, "decided": decided},
	}
	if p.ResearchSummary != nil {
		out["research_summary"] = *p.ResearchSummary
	}
	return out, nil
}

func planUpdate() *Tool {
	return &Tool{
		Name: "plan_update",
		Description: "Change the issues of the active plan: add (title), remove (issue_id), edit (issue_id, title) or reopen (issue_id: back to pending, decision dropped). " +
			"Issue ids are never renumbered.",
		Params:      params("plan_update"),
		Annotations: Annotations{Title: "Update plan issues", Destructive: true, Idempotent: false, OpenWorld: false},
		Prepare: func(args map[string]any) {
			if args["action"] == "modify" { // nexus-core's skill bodies still say modify
				args["action"] = "edit"
			}
		},
		ParamErrors: map[string]string{"action": errUnknownAction},
		Handle:      Object(runPlanUpdate),
	}
}

func runPlanUpdate(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	action, _ := str(args, "action")
	id, hasID := integer(args, "issue_id")
	title, _ := str(args, "title")
	hasTitle := title != "" // an empty title is no title: the plan schema wants one character
	var out map[string]any
	err := updatePlan(ctx, env.Store, func(p *state.Plan) error {
		switch action {
		case "add":
			if !hasTitle {
				return Errorf("title is required for add")
			}
			var next int64
			for _, is := range p.Issues {
				next = max(next, is.ID)
			}
			is := state.Issue{ID: next + 1, Title: title, Status: state.IssuePending}
			p.Issues = append(p.Issues, is)
			out = map[string]any{"added": true, "issue": map[string]any{"id": is.ID, "title": is.Title, "status": is.Status}}
		case "remove":
			if !hasID {
				return Errorf("issue_id is required for remove")
			}
			i, err := issueIndex(p, id)
			if err != nil {
				return err
			}
			p.Issues = append(p.Issues[:i:i], p.Issues[i+1:]...)
			out = map[string]any{"removed": true, "issue": map[string]any{"id": id}}
		case "edit":
			if !hasID || !hasTitle {
				return Errorf("issue_id and title are required for edit")
			}
			i, err := issueIndex(p, id)
			if err != nil {
				return err
			}
			p.Issues[i].Title = title
			out = map[string]any{"edited": true, "issue": map[string]any{"id": id, "title": title}}
		case "reopen":
			if !hasID {
				return Errorf("issue_id is required for reopen")
			}
			i, err := issueIndex(p, id)
			if err != nil {
				return err
			}
			// The decision key is removed, not nulled: the schema types it
			// as a string (digest C5). how_* are kept as the record of
			// who was consulted.
			p.Issues[i].Status = state.IssuePending
			p.Issues[i].Decision = nil
			is := p.Issues[i]
			out = map[string]any{"reopened": true, "issue": map[string]any{"id": is.ID, "title": is.Title, "status": is.Status}}
		default:
			return Errorf(errUnknownAction)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func planDecide() *Tool {
	return &Tool{
		Name: "plan_decide",
		Description: "Record the decision for one plan issue and mark it decided, optionally with the HOW agents consulted (how_agents, how_summary, how_agent_ids). " +
			"Returns the issues still open, or a hint for the next step when all are decided.",
		Params:      params("plan_decide"),
		Annotations: Annotations{Title: "Decide a plan issue", Destructive: true, Idempotent: true, OpenWorld: false},
		Prepare: func(args map[string]any) {
			// nexus-core's skill bodies still call nx_plan_decide(issue_id, summary).
			if _, ok := args["decision"]; !ok {
				if s, ok := args["summary"]; ok {
					args["decision"] = s
					delete(args, "summary")
				}
			}
		},
		Handle: Object(runPlanDecide),
	}
}

// allDecidedHint is returned once every issue is decided. It names the
// abstract tool, never a harness-prefixed one.
const allDecidedHint = "All issues are decided. Next: turn the decisions into tasks with task_add (owner, deps, acceptance), then carry them out."

func runPlanDecide(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	id, _ := integer(args, "issue_id")
	decision, _ := str(args, "decision")
	var out map[string]any
	err := updatePlan(ctx, env.Store, func(p *state.Plan) error {
		idx, err := issueIndex(p, id)
		if err != nil {
			return err
		}
		is := &p.Issues[idx]
		is.Status = state.IssueDecided
		is.Decision = &decision
		if v, ok := strList(args, "how_agents"); ok {
			is.HowAgents = v
		}
		if v, ok := strMap(args, "how_summary"); ok {
			is.HowSummary = v
		}
		if v, ok := strMap(args, "how_agent_ids"); ok {
			is.HowAgentIDs = v
		}
		remaining := []any{}
		for _, o := range p.Issues {
			if o.Status != state.IssueDecided {
				remaining = append(remaining, map[string]any{"id": o.ID, "title": o.Title, "status": o.Status})
			}
		}
		out = map[string]any{"decided": true, "issue": is.Title, "allComplete": len(remaining) == 0}
		if len(remaining) == 0 {
			out["message"] = allDecidedHint
		} else {
			out["remaining"] = remaining
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updatePlan runs change on the active plan in one locked transaction and
// writes the plan back when change succeeds. With no active plan it fails
// with errNoPlan.
func updatePlan(ctx context.Context, s *state.Store, change func(p *state.Plan) error) error {
	return s.Update(ctx, []string{s.L.PlanPath()}, func(tx *state.Tx) error {
		p, ok, err := tx.Plan()
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(errNoPlan)
		}
		if err := change(p); err != nil {
			return err
		}
		return tx.PutPlan(p)
	})
}

// issueIndex is the position of issue id in the plan's issue list.
func issueIndex(p *state.Plan, id int64) (int, error) {
	for i := range p.Issues {
		if p.Issues[i].ID == id {
			return i, nil
		}
	}
	return -1, errIssueNotFound(id)
}

func withTitle(a Annotations, title string) Annotations {
	a.Title = title
	return a
}
