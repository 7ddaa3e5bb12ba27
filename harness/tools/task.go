package tools

import (
	"context"

	"path/filepath"

	"github.com/nexus-harness/nexus/internal/state"
)

// Contract error messages (digest §2.7).
const errNoTasks = "tasks.json not found"

func errTaskNotFound(id int64) error { return Errorf("Task id " + itoa(id) + " not found") }

func taskAdd() *Tool {
	return &Tool{
		Name: "task_add",
		Description: "Add a task to .nexus/state/tasks.json (created on first use) with the next id and status pending. " +
			"goal replaces the task list's goal; decisions are appended to its decisions.",
		Params: params("task_add"),
		// goal replaces the list's goal, so a call can overwrite data.
		Annotations: Annotations{Title: "Add a task", Destructive: true, Idempotent: false, OpenWorld: false},
		Classes:     []string{ClassTaskCreation},
		Handle:      Object(runTaskAdd),
	}
}

func runTaskAdd(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	s := env.Store
	var added state.Task
	err := s.Update(ctx, []string{s.L.TasksPath()}, func(tx *state.Tx) error {
		t, ok, err := tx.Tasks()
		if err != nil {
			return err
		}
		if !ok {
			// The outputs contract mandates goal "" here although the
			// schema asks for one character (digest C7); the store
			// tolerates exactly that.
			t = &state.Tasks{SchemaVersion: state.SchemaVersion, Goal: "", Decisions: []string{}, Tasks: []state.Task{}}
		}
		var next int64
		for _, x := range t.Tasks {
			next = max(next, x.ID)
		}
		title, _ := str(args, "title")
		ctxText, _ := str(args, "context")
		deps, ok := intList(args, "deps")
		if !ok {
			deps = []int64{}
		}
		added = state.Task{
			ID:               next + 1,
			Title:            title,
			Context:          ctxText,
			Approach:         strPtr(args, "approach"),
			Acceptance:       strPtr(args, "acceptance"),
			Risk:             strPtr(args, "risk"),
			Status:           state.TaskPending,
			Deps:             deps,
			Owner:            strPtr(args, "owner"),
			OwnerAgentID:     strPtr(args, "owner_agent_id"),
			OwnerReusePolicy: strPtr(args, "owner_reuse_policy"),
			CreatedAt:        s.Timestamp(),
		}
		if n, ok := integer(args, "plan_issue"); ok {
			added.PlanIssue = &n
		}
		t.Tasks = append(t.Tasks, added)
		if g, ok := str(args, "goal"); ok {
			t.Goal = g
		}
		if d, ok := strList(args, "decisions"); ok {
			t.Decisions = append(t.Decisions, d...)
		}
		return tx.PutTasks(t)
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"task": added}, nil
}

func taskList() *Tool {
	return &Tool{
		Name: "task_list",
		Description: "List every task with a summary: counts by status (blocked = in progress) and ready, the ids of pending tasks whose deps are all completed. " +
			"Returns {\"exists\": false} when there is no task list.",
		Params:      params("task_list"),
		Annotations: withTitle(readOnly, "List tasks"),
		Handle:      runTaskList,
	}
}

// runTaskList answers from the encoded answer kept per version of
// tasks.json, so a repeated call neither re-encodes nor re-validates
// megabytes of tasks.
func runTaskList(_ context.Context, env *Env, _ map[string]any) (*Result, error) {
	t, ok, err := env.Store.ReadTasks()
	if err != nil {
		return nil, err
	}
	if !ok {
		b, err := state.MarshalCompact(map[string]any{"exists": false})
		return Encoded(b), err
	}
	b, err := env.results.taskListJSON(env.Store, t)
	if err != nil {
		return nil, err
	}
	return Encoded(b), nil
}

// taskListHead is task_list's answer for t without its tasks (the goal
// and the summary; taskListJSON adds the tasks).
func taskListHead(t *state.Tasks) map[string]any {
	status := make(map[int64]string, len(t.Tasks))
	completed, pending, inProgress := 0, 0, 0
	for _, x := range t.Tasks {
		status[x.ID] = x.Status
		switch x.Status {
		case state.TaskCompleted:
			completed++
		case state.TaskPending:
			pending++
		case state.TaskInProgress:
			inProgress++
		}
	}
	ready := []any{}
	for _, x := range t.Tasks {
		if x.Status != state.TaskPending {
			continue
		}
		ok := true
		for _, d := range x.Deps {
			if status[d] != state.TaskCompleted { // an unknown dep is not completed
				ok = false
				break
			}
		}
		if ok {
			ready = append(ready, x.ID)
		}
	}
	return map[string]any{
		"goal": t.Goal,
		"summary": map[string]any{
			"total":     len(t.Tasks),
			"completed": completed,
			"pending":   pending,
			// The contract defines blocked as the in-progress count.
			"blocked": inProgress,
			"ready":   ready,
		},
	}
}

func taskUpdate() *Tool {
	return &Tool{
		Name:        "task_update",
		Description: "Set the status of a task (pending, in_progress, completed). Any transition is allowed; completed to pending reopens a task.",
		Params:      params("task_update"),
		Annotations: Annotations{Title: "Update a task", Destructive: true, Idempotent: true, OpenWorld: false},
		Classes:     []string{ClassTaskStateTransition, ClassTaskMetadataModified},
		Handle:      Object(runTaskUpdate),
	}
}

func runTaskUpdate(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	id, _ := integer(args, "id")
	status, _ := str(args, "status")
	s := env.Store
	var updated state.Task
	err := s.Update(ctx, []string{s.L.TasksPath()}, func(tx *state.Tx) error {
		t, ok, err := tx.Tasks()
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(errNoTasks)
		}
		for i := range t.Tasks {
			if t.Tasks[i].ID == id {
				t.Tasks[i].Status = status
				updated = t.Tasks[i]
				return tx.PutTasks(t)
			}
		}
		return errTaskNotFound(id)
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"task": updated}, nil
}

func taskClose() *Tool {
	return &Tool{
		Name: "task_close",
		Description: "Close the cycle: append the plan and tasks to .nexus/history.json, then delete .nexus/state/plan.json and tasks.json. " +
			"Artifacts are kept (copy or commit them first if they must outlive the session).",
		Params:      params("task_close"),
		Annotations: Annotations{Title: "Close the cycle", Destructive: true, Idempotent: false, OpenWorld: false},
		Classes:     []string{ClassTaskStateTransition, ClassTaskMetadataModified},
		Handle:      Object(runTaskClose),
	}
}

func runTaskClose(ctx context.Context, env *Env, _ map[string]any) (map[string]any, error) {
	s := env.Store
	var out map[string]any
	err := s.Update(ctx, []string{s.L.HistoryPath(), s.L.PlanPath(), s.L.TasksPath()}, func(tx *state.Tx) error {
		p, hasPlan, err := tx.Plan()
		if err != nil {
			return err
		}
		t, hasTasks, err := tx.Tasks()
		if err != nil {
			return err
		}
		var tasks []state.Task
		goal := ""
		if hasTasks {
			tasks, goal = t.Tasks, t.Goal
		}
		now := s.Timestamp()
		branch := env.branch()
		cycle, err := newCycle(now, branch, p, tasks)
		if err != nil {
			return err
		}
		total, err := tx.AppendCycle(cycle)
		if err != nil {
			return err
		}
		deleted := []any{}
		decided := 0
		topics := []any{}
		if hasPlan {
			tx.Delete(s.L.PlanPath())
			deleted = append(deleted, filepath.Base(s.L.PlanPath()))
			for _, is := range p.Issues {
				if is.Status == state.IssueDecided {
					decided++
				}
			}
			if p.Topic != "" {
				topics = append(topics, p.Topic)
			}
		}
		if hasTasks {
			tx.Delete(s.L.TasksPath())
			deleted = append(deleted, filepath.Base(s.L.TasksPath()))
		}
		if goal != "" {
			topics = append(topics, goal)
		}
		out = map[string]any{
			"closed":       true,
			"cycle":        now,
			"branch":       branch,
			"archived":     map[string]any{"plan": hasPlan, "decisions": decided, "tasks": len(tasks)},
			"deleted":      deleted,
			"total_cycles": total,
			"memoryHint":   map[string]any{"taskCount": len(tasks), "decisionCount": decided, "cycleTopics": topics},
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if env.OnTaskClose != nil {
		env.OnTaskClose(ctx)
	}
	return out, nil
}
