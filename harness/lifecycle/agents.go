package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
)

// subagentSpawn records a new instance, or a resume when the host starts an
// instance it already tracks (a host may fire its subagent-start event on
// resume too), and tells the subagent who it is, what it may not do and what its
// task is.
func (e *Engine) subagentSpawn(ctx context.Context, ev Event) (Reply, error) {
	s := e.o.Store
	resumed := false
	err := s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
		entries, _, err := tx.Tracker()
		if err != nil {
			return err
		}
		if i := lastIndex(entries, ev.AgentID); i >= 0 {
			resumeEntry(&entries[i], s.Timestamp())
			resumed = true
		} else {
			en, err := spawnEntry(s, SpawnParams{AgentName: ev.AgentType, AgentID: ev.AgentID})
			if err != nil {
				return err
			}
			entries = append(entries, en)
		}
		return tx.PutTracker(entries)
	})
	if err != nil {
		return Reply{}, err
	}
	return Reply{Context: e.agentBriefing(ctx, ev, resumed)}, nil
}

func (e *Engine) subagentResume(ctx context.Context, ev Event) (Reply, error) {
	if _, err := AgentResume(ctx, e.o.Store, ResumeParams{AgentID: ev.AgentID}); err != nil {
		if !errors.Is(err, ErrNotTracked) {
			return Reply{}, err
		}
		// Resuming an instance nexus never saw start: track it from now.
		return e.subagentSpawn(ctx, ev)
	}
	return Reply{Context: e.agentBriefing(ctx, ev, true)}, nil
}

// subagentMessage handles a message that reaches a subagent (a host that
// reports its subagents' prompts: Lead's message to one). It is no user
// message, so no tag fires and no status is injected. An instance tracked
// as completed is being resumed: a host that fires no spawn event when it
// resumes one (Lead sending it a follow-up) shows the resume only this way.
// The resumed instance gets its briefing again; an instance nexus never
// saw start is tracked from now.
func (e *Engine) subagentMessage(ctx context.Context, ev Event) (Reply, error) {
	entries, _, err := e.o.Store.ReadTracker()
	if err != nil {
		return Reply{}, err
	}
	i := lastIndex(entries, ev.AgentID)
	switch {
	case i < 0:
		return e.subagentSpawn(ctx, ev)
	case entries[i].Status != state.AgentCompleted:
		return Reply{}, nil // its first message, or one while it runs
	}
	// A resume; a concurrent one may have counted it already.
	s := e.o.Store
	counted := false
	err = s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
		entries, _, err := tx.Tracker()
		if err != nil {
			return err
		}
		i := lastIndex(entries, ev.AgentID)
		if i < 0 || entries[i].Status != state.AgentCompleted {
			return nil
		}
		resumeEntry(&entries[i], s.Timestamp())
		counted = true
		return tx.PutTracker(entries)
	})
	if err != nil || !counted {
		return Reply{}, err
	}
	e.log.Log(ctx, "debug", UserMessage, ev.AgentID, "a message to a completed subagent resumed it")
	return Reply{Context: e.agentBriefing(ctx, ev, true)}, nil
}

func (e *Engine) subagentComplete(ctx context.Context, ev Event) (Reply, error) {
	s := e.o.Store
	files := ev.FilesTouched
	if files == nil {
		var err error
		if files, err = FilesTouched(s, ev.AgentID); err != nil {
			return Reply{}, err
		}
	}
	var done state.TrackerEntry
	ignored := false
	err := s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
		entries, _, err := tx.Tracker()
		if err != nil {
			return err
		}
		i := lastIndex(entries, ev.AgentID)
		if i < 0 && ev.AgentType == "" {
			// An agent nexus never saw start and the host does not name
			// (a host's own helper, such as a compaction agent): not a
			// role, not tracked.
			ignored = true
			return nil
		}
		if i < 0 {
			// Started before nexus was installed (or its tracker was
			// reset): record what is known rather than lose the result.
			en, err := spawnEntry(s, SpawnParams{AgentName: ev.AgentType, AgentID: ev.AgentID})
			if err != nil {
				return err
			}
			entries = append(entries, en)
			i = len(entries) - 1
			e.log.Log(ctx, "warn", SubagentComplete, ev.AgentID, "completed agent was not tracked; added it with started_at = now")
		}
		completeEntry(&entries[i], s.Timestamp(), ev.LastMessage, files)
		done = entries[i]
		return tx.PutTracker(entries)
	})
	if err != nil {
		return Reply{}, err
	}
	if ignored {
		e.log.Log(ctx, "debug", SubagentComplete, ev.AgentID, "ignored the completion of an untracked agent without an agent type (not a role)")
		return Reply{}, nil
	}
	note := e.acceptanceReminder(done)
	if note == "" {
		return Reply{}, nil
	}
	if e.o.Host.LeadReminders {
		// The host cannot show the subagent's stop to Lead's model: keep
		// the note for Lead's next tool result of the spawn tool.
		if err := e.addReminder(ctx, note); err != nil {
			e.log.Log(ctx, "warn", SubagentComplete, ev.AgentID, "could not keep the reminder for Lead: "+err.Error())
		}
		return Reply{}, nil
	}
	return Reply{Context: note}, nil
}

// remindersPath holds notes for Lead kept by subagent_complete until Lead's
// next spawn-tool result (Options.LeadReminders), one JSON string a line.
func (e *Engine) remindersPath() string {
	return filepath.Join(e.o.Store.L.HarnessDir(), "lead-reminders.jsonl")
}

// maxReminders bounds the notes given to Lead at once; maxRemindersFile
// the file read back.
const (
	maxReminders     = 20
	maxRemindersFile = 1 << 20
)

// addReminder appends a note without fsync: a subagent stop must not pay
// for a durable write, and a note lost to a power cut costs little.
func (e *Engine) addReminder(ctx context.Context, note string) error {
	return e.o.Store.AppendLineNoSync(ctx, e.remindersPath(), note)
}

// takeReminders returns and clears the notes kept for Lead (the last
// maxReminders, duplicates dropped).
func (e *Engine) takeReminders(ctx context.Context) []string {
	p := e.remindersPath()
	if !state.Exists(p) {
		return nil
	}
	var notes []string
	seen := map[string]bool{}
	if b, err := e.o.Store.L.ReadFile(p, maxRemindersFile); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			var n string
			if json.Unmarshal([]byte(line), &n) == nil && n != "" && !seen[n] {
				seen[n] = true
				notes = append(notes, n)
			}
		}
	}
	if len(notes) > maxReminders {
		notes = notes[len(notes)-maxReminders:]
	}
	if err := e.o.Store.RemoveHarnessFile(ctx, p); err != nil {
		e.log.Log(ctx, "warn", PostToolUse, "", err.Error())
	}
	return notes
}

// acceptanceReminder reminds Lead when the finished agent's task has
// acceptance criteria and no tester or reviewer task is scheduled.
func (e *Engine) acceptanceReminder(done state.TrackerEntry) string {
	t, ok, err := e.peekTasks()
	if err != nil || !ok {
		return ""
	}
	task := ownTask(t, done.AgentID, done.AgentName)
	if task == nil || task.Acceptance == nil || *task.Acceptance == "" {
		return ""
	}
	for _, other := range t.Tasks {
		if other.Owner != nil && (*other.Owner == "tester" || *other.Owner == "reviewer") && other.Status != state.TaskCompleted {
			return ""
		}
	}
	return fmt.Sprintf("nexus: task #%d (%s) has acceptance criteria and no tester or reviewer task is scheduled; have it verified before closing it.", task.ID, task.Title)
}

// ownTask finds the task an agent works on: the one whose owner_agent_id
// is the instance, else the first in-progress (then pending) task owned by
// the role.
func ownTask(t *state.Tasks, agentID, role string) *state.Task {
	for i := range t.Tasks {
		if t.Tasks[i].OwnerAgentID != nil && *t.Tasks[i].OwnerAgentID == agentID {
			return &t.Tasks[i]
		}
	}
	if role == "" {
		return nil
	}
	for _, want := range []string{state.TaskInProgress, state.TaskPending} {
		for i := range t.Tasks {
			if t.Tasks[i].Owner != nil && *t.Tasks[i].Owner == role && t.Tasks[i].Status == want {
				return &t.Tasks[i]
			}
		}
	}
	return nil
}

// agentBriefing is the context a subagent starts with.
func (e *Engine) agentBriefing(ctx context.Context, ev Event, resumed bool) string {
	role := ev.Role()
	var b strings.Builder
	if def, ok := e.agentDef(role); ok {
		fmt.Fprintf(&b, "nexus: you are the %s agent (%s; category %s, resume tier %s), instance %s.\n", def.ID, def.Name, def.Category, def.ResumeTier, ev.AgentID)
		if resumed && def.ResumeTier == "bounded" {
			b.WriteString("You are being resumed: re-read your target files before changing anything, since they may have changed since you last saw them.\n")
		}
	} else {
		fmt.Fprintf(&b, "nexus: subagent instance %s", ev.AgentID)
		if ev.AgentType != "" {
			fmt.Fprintf(&b, " (%s; not a nexus-core role, so no canonical capabilities apply)", ev.AgentType)
		}
		b.WriteString(".\n")
		if resumed {
			b.WriteString("You are being resumed: re-read the files you work on before changing anything.\n")
		}
	}
	if g, err := e.Gate(ctx); err == nil {
		if caps := g.Capabilities(role); len(caps) > 0 {
			cov := g.Coverage()
			b.WriteString("Your capabilities restrict you; nexus denies these tools:\n")
			for _, c := range caps {
				cp, ok := e.o.Core.Capability(c)
				if !ok {
					continue
				}
				set := map[string]bool{}
				for _, cl := range cp.BlocksSemanticClasses {
					for _, tool := range cov[cl] {
						set[tool] = true
					}
				}
				var tools []string
				for t := range set {
					tools = append(tools, t)
				}
				sort.Strings(tools)
				fmt.Fprintf(&b, "- %s (%s): %s\n", c, cp.Description, strings.Join(tools, ", "))
			}
		}
	}
	if t, ok, err := e.peekTasks(); err == nil && ok {
		if task := ownTask(t, ev.AgentID, role); task != nil {
			b.WriteString(taskBlock(e.fullTask(t, task)))
		}
	}
	return e.fit([]part{{text: b.String()}, {text: e.knowledge().text(), more: e.moreKnowledge()}})
}

// taskBlock is the structured task context of nexus-core's delegation
// template; absent sections are omitted.
func taskBlock(t *state.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TASK: %s (task #%d, %s)\n", t.Title, t.ID, t.Status)
	fmt.Fprintf(&b, "CONTEXT: %s\n", t.Context)
	if t.Approach != nil && *t.Approach != "" {
		fmt.Fprintf(&b, "APPROACH: %s\n", *t.Approach)
	}
	if t.Acceptance != nil && *t.Acceptance != "" {
		fmt.Fprintf(&b, "ACCEPTANCE: %s\n", *t.Acceptance)
	}
	if t.Risk != nil && *t.Risk != "" {
		fmt.Fprintf(&b, "RISK: %s\n", *t.Risk)
	}
	return b.String()
}
