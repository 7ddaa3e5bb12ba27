package tools

import (
	"context"
	"encoding/json"

	"github.com/nexus-harness/nexus/internal/state"
)

func contextTool() *Tool {
	return &Tool{
		Name: "context",
		Description: "Snapshot of the session: current git branch, activeMode \"team\" when a task list exists (else null), its goal, " +
			"task counts and the decisions recorded in the task list.",
		Params:      params("context"),
		Annotations: withTitle(readOnly, "Session context"),
		Handle:      Object(runContext),
	}
}

// runContext never fails: what cannot be read is left out (tools contract).
// tasks.json comes from the store's cache; a file that does not fit nexus's
// model is read leniently, so one odd field does not hide the whole snapshot.
func runContext(_ context.Context, env *Env, _ map[string]any) (map[string]any, error) {
	out := map[string]any{"branch": env.branch(), "activeMode": nil, "decisions": []any{}}
	var (
		goal               string
		decisions          []string
		total              int
		completed, pending int
	)
	if t, ok, err := env.Store.ReadTasks(); err == nil {
		if !ok {
			return out, nil
		}
		goal, decisions, total = t.Goal, t.Decisions, len(t.Tasks)
		for i := range t.Tasks {
			switch t.Tasks[i].Status {
			case state.TaskCompleted:
				completed++
			case state.TaskPending:
				pending++
			}
		}
	} else {
		// Not nexus's model (a member of an odd type): read leniently.
		b, err := env.Store.L.ReadFile(env.Store.L.TasksPath(), 0)
		if err != nil {
			return out, nil
		}
		var t struct {
			Goal      any   `json:"goal"`
			Decisions []any `json:"decisions"`
			Tasks     []struct {
				Status any `json:"status"`
			} `json:"tasks"`
		}
		if json.Unmarshal(b, &t) != nil {
			return out, nil
		}
		goal, _ = t.Goal.(string)
		total = len(t.Tasks)
		for _, x := range t.Tasks {
			switch x.Status {
			case state.TaskCompleted:
				completed++
			case state.TaskPending:
				pending++
			}
		}
		for _, d := range t.Decisions {
			if s, ok := d.(string); ok {
				decisions = append(decisions, s)
			}
		}
	}
	// Decisions live in tasks.json (fixture context_with_decisions; the
	// prose's decisions.json is not written by anyone, digest C1).
	if decisions == nil {
		decisions = []string{}
	}
	out["activeMode"] = "team"
	out["goal"] = goal
	out["tasksSummary"] = map[string]any{"total": total, "completed": completed, "pending": pending}
	out["decisions"] = decisions
	return out, nil
}
