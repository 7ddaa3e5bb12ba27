package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/vocabulary"
)

// activeSkillPath is a harness-independent file in this harness's
// namespace remembering the skill activated by the last skill tag, so a
// context compaction can re-inject it.
func (e *Engine) activeSkillPath() string {
	return filepath.Join(e.o.Store.L.HarnessDir(), "active-skill.json")
}

// ActiveSkill is the content of active-skill.json.
type ActiveSkill struct {
	Skill       string `json:"skill"`
	Mode        string `json:"mode,omitempty"`
	Tag         string `json:"tag"`
	ActivatedAt string `json:"activated_at"`
	// HostLoaded is set once the model loaded the skill through the host's
	// skill tool: the host then keeps it in context itself (it re-attaches
	// invoked skills after compaction).
	HostLoaded bool `json:"host_loaded,omitempty"`
}

func (e *Engine) readActiveSkill() (*ActiveSkill, bool) {
	b, err := e.o.Store.L.ReadFile(e.activeSkillPath(), 0)
	if err != nil {
		return nil, false
	}
	var a ActiveSkill
	if json.Unmarshal(b, &a) != nil || a.Skill == "" {
		return nil, false
	}
	return &a, true
}

func (e *Engine) writeActiveSkill(ctx context.Context, a ActiveSkill) error {
	return e.writeRecord(ctx, e.activeSkillPath(), a)
}

// writeRecord writes v as indented JSON to the harness file p, under the
// store's lock.
func (e *Engine) writeRecord(ctx context.Context, p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return e.o.Store.Update(ctx, []string{p}, func(tx *state.Tx) error {
		tx.PutRaw(p, append(b, '\n'))
		return nil
	})
}

// sessionPath remembers the host session that last started, so a resume of
// that same session is told apart from a new one.
func (e *Engine) sessionPath() string {
	return filepath.Join(e.o.Store.L.HarnessDir(), "session.json")
}

type sessionRecord struct {
	SessionID string `json:"session_id"`
	StartedAt string `json:"started_at"`
}

func (e *Engine) readSession() (sessionRecord, bool) {
	var r sessionRecord
	b, err := e.o.Store.L.ReadFile(e.sessionPath(), 4096)
	if err != nil || json.Unmarshal(b, &r) != nil {
		return sessionRecord{}, false
	}
	return r, r.SessionID != ""
}

func (e *Engine) writeSession(ctx context.Context, r sessionRecord) error {
	return e.writeRecord(ctx, e.sessionPath(), r)
}

// leadText tells the session's model that it is Lead, which roles it can
// spawn and how, and the unplanned-edit rule, so it does not learn them
// from a denial.
func (e *Engine) leadText() string {
	var b strings.Builder
	b.WriteString("You are Lead, the coordinator: you plan with the user, own the tasks, and hand work to role subagents, who report back to you.\n")
	var roles []string
	for _, a := range e.o.Core.Manifest().Agents {
		roles = append(roles, fmt.Sprintf("%s (%s, %s)", a.ID, a.Category, strings.TrimRight(a.Task, ".")))
	}
	how := e.o.Host.SpawnRoles
	if how == "" {
		how = "as subagents (by role id)"
	}
	fmt.Fprintf(&b, "Roles you can spawn %s: %s.\n", how, strings.Join(roles, "; "))
	exempt := fmt.Sprintf("writes under .nexus/ and %s are exempt", e.toolRef("artifact_write"))
	switch e.o.Gate.UnplannedEdit {
	case "deny", "":
		fmt.Fprintf(&b, "Unplanned edits are denied: while no task cycle is open (.nexus/state/tasks.json does not exist), nexus denies file edits by you and every subagent (%s). Plan first: [plan] then [run], or register tasks with %s.\n", exempt, e.toolRef("task_add"))
	case "warn":
		fmt.Fprintf(&b, "Unplanned edits are allowed with a warning: while no task cycle is open (.nexus/state/tasks.json does not exist), nexus warns on file edits (%s). Prefer to plan first: [plan] then [run].\n", exempt)
	}
	return b.String()
}

// --- session_start -------------------------------------------------------

func (e *Engine) sessionStart(ctx context.Context, ev Event) (Reply, error) {
	s := e.o.Store
	gitignoreOK, err := s.EnsureTree()
	if err != nil {
		return Reply{}, err
	}
	// A resume of the session that created the state continues it: its
	// agents stay tracked (they can be resumed) and its plan is no orphan.
	prev, _ := e.readSession()
	resumed := ev.Source == "resume" && ev.SessionID != "" && prev.SessionID == ev.SessionID
	if !resumed {
		if err := s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
			return tx.PutTracker([]state.TrackerEntry{})
		}); err != nil {
			return Reply{}, err
		}
	}
	if ev.SessionID != "" && prev.SessionID != ev.SessionID {
		if err := e.writeSession(ctx, sessionRecord{SessionID: ev.SessionID, StartedAt: s.Timestamp()}); err != nil {
			e.log.Log(ctx, "warn", SessionStart, "", "could not record the session id: "+err.Error())
		}
	}
	if removed, err := s.RemoveLegacyTracker(); err != nil {
		e.log.Log(ctx, "warn", SessionStart, "", "could not remove the legacy .nexus/state/agent-tracker.json: "+err.Error())
	} else if removed {
		e.log.Log(ctx, "info", SessionStart, "", "removed the legacy .nexus/state/agent-tracker.json")
	}
	if ev.Source != "resume" && state.Exists(e.activeSkillPath()) {
		if err := s.RemoveHarnessFile(ctx, e.activeSkillPath()); err != nil {
			e.log.Log(ctx, "warn", SessionStart, "", err.Error())
		}
	}

	var warnings []string
	if w := e.configWarning(ctx); w != "" {
		warnings = append(warnings, w)
	}
	if !gitignoreOK {
		warnings = append(warnings, ".nexus/.gitignore does not ignore state/; add a line `state/` so session files are never committed.")
	}
	var notes []string
	if p, ok, err := e.peekPlan(); err != nil {
		warnings = append(warnings, readProblem("plan.json", err))
	} else if ok && resumed {
		notes = append(notes, fmt.Sprintf("This session's plan is open: %s.", planLine(p)))
	} else if ok {
		warnings = append(warnings, fmt.Sprintf("A plan.json from an earlier session exists (%s); a previous session may not have closed cleanly. Continue it with [plan], or archive it with %s.", planLine(p), e.toolRef("task_close")))
	}
	if t, ok, err := e.peekTasks(); err != nil {
		warnings = append(warnings, readProblem("tasks.json", err))
	} else if ok && resumed {
		notes = append(notes, fmt.Sprintf("This session's task cycle is open: %s.", tasksLine(t)))
	} else if ok {
		warnings = append(warnings, fmt.Sprintf("A tasks.json from an earlier session exists (%s); a previous session may not have closed cleanly. Resume it with [run], or archive it with %s.", tasksLine(t), e.toolRef("task_close")))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "nexus is active for this project (nexus-core %s, harness id %s).\n", e.o.Core.Version(), s.L.HarnessID)
	b.WriteString(e.leadText())
	b.WriteString(e.tagLine())
	if e.o.Host.ToolNames {
		fmt.Fprintf(&b, "nexus tools appear as %s* (for example %s).\n", e.toolRef(""), e.toolRef("plan_status"))
	}
	if e.o.Memory == nil {
		b.WriteString("Memory features are off in this nexus: reads of .nexus/memory/ are not tracked, and [m] / [m:gc] are not carried out.\n")
	}
	var tail strings.Builder
	for _, n := range notes {
		tail.WriteString(n + "\n")
	}
	for _, w := range warnings {
		tail.WriteString("Warning: " + w + "\n")
	}
	r := Reply{Context: e.fit([]part{{text: b.String()}, {text: e.knowledge().text(), more: e.moreKnowledge()}, {text: tail.String()}})}
	if len(warnings) > 0 {
		r.Notice = "nexus: " + strings.Join(warnings, " ")
		for _, w := range warnings {
			e.log.Log(ctx, "warn", SessionStart, "", w)
		}
	}
	return r, nil
}

func readProblem(name string, err error) string {
	var ce *state.CorruptError
	if errors.As(err, &ce) {
		return ce.Error()
	}
	return fmt.Sprintf("could not read %s: %v", name, err)
}

func (e *Engine) prefix() string { return e.o.ToolPrefix }

// toolRef names a nexus tool the way the host shows it to the model.
func (e *Engine) toolRef(abstract string) string {
	return e.o.Host.ToolPrefix + e.prefix() + abstract
}

// tagLine lists the bracket tags of the distribution.
func (e *Engine) tagLine() string {
	var forms []string
	for _, t := range e.o.Core.Tags() {
		forms = append(forms, t.Trigger)
		for _, v := range t.Variants {
			if v == "*" {
				forms = append(forms, strings.TrimSuffix(t.Trigger, "]")+":NAME]")
			} else {
				forms = append(forms, strings.TrimSuffix(t.Trigger, "]")+":"+v+"]")
			}
		}
	}
	return "The user's bracket tags (nexus acts on them): " + strings.Join(forms, " ") + ".\n"
}

// --- session_end ---------------------------------------------------------

func (e *Engine) sessionEnd(ctx context.Context, ev Event) (Reply, error) {
	s := e.o.Store
	var warnings []string
	if t, ok, err := e.peekTasks(); err != nil {
		warnings = append(warnings, readProblem("tasks.json", err))
	} else if ok {
		var open []string
		for _, task := range t.Tasks {
			if task.Status == state.TaskPending || task.Status == state.TaskInProgress {
				open = append(open, fmt.Sprintf("#%d (%s)", task.ID, task.Status))
			}
		}
		if len(open) > 0 {
			warnings = append(warnings, fmt.Sprintf("%d task(s) are not completed: %s. Finish them, or close the cycle with %s to archive it in history.json.", len(open), strings.Join(open, ", "), e.toolRef("task_close")))
		}
	}
	if p, ok, err := e.peekPlan(); err != nil {
		warnings = append(warnings, readProblem("plan.json", err))
	} else if ok {
		warnings = append(warnings, fmt.Sprintf("plan.json is still open (%s); it is lost for history unless archived with %s.", planLine(p), e.toolRef("task_close")))
	}
	// Harness-local session files only: history.json, memory/, context/
	// and rules/ belong to the project.
	for _, p := range []string{s.L.TrackerPath(), s.L.EditTrackerPath(), s.L.ReopenTrackerPath(), e.activeSkillPath(), e.remindersPath(), s.L.ToolLogPath()} {
		if !state.Exists(p) {
			continue
		}
		if err := s.RemoveHarnessFile(ctx, p); err != nil {
			e.log.Log(ctx, "warn", SessionEnd, "", err.Error())
		}
	}
	var notes []string
	if e.o.MemoryAutoGC {
		if e.o.Memory == nil {
			notes = append(notes, "memory.gc.auto is on, but memory features are off in this nexus; no automatic gc ran.")
		} else if msg, err := e.o.Memory.AutoGC(ctx); err != nil {
			warnings = append(warnings, "automatic memory gc failed: "+err.Error())
		} else if msg != "" {
			notes = append(notes, msg)
		}
	}
	for _, w := range warnings {
		e.log.Log(ctx, "warn", SessionEnd, "", w)
	}
	all := append(append([]string{}, warnings...), notes...)
	if len(all) == 0 {
		return Reply{}, nil
	}
	text := "nexus: " + strings.Join(all, " ")
	return Reply{Context: text, Notice: text}, nil
}

// --- context_compact -----------------------------------------------------

func (e *Engine) contextCompact(ctx context.Context, ev Event) (Reply, error) {
	var head strings.Builder
	head.WriteString("nexus state after context compaction (read fresh from disk):\n")
	active, hasActive := e.readActiveSkill()
	if hasActive {
		fmt.Fprintf(&head, "Active skill: %s", active.Skill)
		if active.Mode != "" {
			fmt.Fprintf(&head, " (mode %s)", active.Mode)
		}
		fmt.Fprintf(&head, ", activated by %s at %s.", active.Tag, active.ActivatedAt)
	} else {
		head.WriteString("Active skill: none.")
	}
	parts := []part{
		{text: head.String()},
		{text: e.planText(), more: e.morePlan()},
		{text: e.tasksText(), more: e.moreTasks()},
		{text: e.knowledge().text(), more: e.moreKnowledge()},
		{text: e.agentsText(), more: e.moreAgents()},
	}
	if hasActive && active.HostLoaded {
		parts = append(parts, part{text: fmt.Sprintf("The %s skill was loaded with the %s tool, so the host keeps its instructions in context; follow them.", active.Skill, e.o.Host.SkillTool)})
	} else if hasActive {
		if st, err := e.activateSkill(active.Skill, active.Mode); err == nil {
			parts = append(parts, e.skillPart(st, active.Tag))
		} else {
			e.log.Log(ctx, "warn", ContextCompact, "", err.Error())
		}
	}
	return Reply{Context: e.fit(parts)}, nil
}

// agentsText lists the agents in agent-tracker.json.
func (e *Engine) agentsText() string {
	entries, ok, err := e.o.Store.ReadTracker()
	if err != nil {
		return "Agents: " + readProblem("agent-tracker.json", err) + "\n"
	}
	if !ok || len(entries) == 0 {
		return "Agents: none tracked.\n"
	}
	var b strings.Builder
	b.WriteString("Agents tracked in agent-tracker.json:\n")
	for _, a := range entries {
		name := a.AgentName
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(&b, "- %s, agent id %s: %s", name, a.AgentID, a.Status)
		if a.Status == state.AgentCompleted && a.StoppedAt != "" {
			fmt.Fprintf(&b, " at %s", a.StoppedAt)
		} else {
			fmt.Fprintf(&b, " since %s", a.StartedAt)
		}
		if a.ResumeCount != nil && *a.ResumeCount > 0 {
			fmt.Fprintf(&b, ", resumed %d time(s)", *a.ResumeCount)
		}
		if tier := e.tier(a.AgentName); tier != "" {
			fmt.Fprintf(&b, ", resume tier %s", tier)
		}
		if len(a.FilesTouched) > 0 {
			fmt.Fprintf(&b, ", files touched: %s", strings.Join(a.FilesTouched, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (e *Engine) tier(role string) string {
	if a, ok := e.o.Core.Agent(role); ok {
		return a.ResumeTier
	}
	return ""
}

// --- plan, tasks and knowledge summaries -----------------------------------

func planLine(p *state.Plan) string {
	pending, decided := 0, 0
	for _, is := range p.Issues {
		if is.Status == state.IssueDecided {
			decided++
		} else {
			pending++
		}
	}
	return fmt.Sprintf("plan #%d %q: %d issue(s), %d decided, %d pending", p.ID, p.Topic, len(p.Issues), decided, pending)
}

func tasksLine(t *state.Tasks) string {
	counts := map[string]int{}
	for _, task := range t.Tasks {
		counts[task.Status]++
	}
	goal := ""
	if t.Goal != "" {
		goal = fmt.Sprintf("goal %q: ", t.Goal)
	}
	return fmt.Sprintf("%s%d task(s), %d completed, %d in progress, %d pending", goal, len(t.Tasks), counts[state.TaskCompleted], counts[state.TaskInProgress], counts[state.TaskPending])
}

// readyTasks returns the pending tasks whose dependencies are all completed.
func readyTasks(t *state.Tasks) []int64 {
	status := map[int64]string{}
	for _, task := range t.Tasks {
		status[task.ID] = task.Status
	}
	var ready []int64
	for _, task := range t.Tasks {
		if task.Status != state.TaskPending {
			continue
		}
		ok := true
		for _, d := range task.Deps {
			ok = ok && status[d] == state.TaskCompleted
		}
		if ok {
			ready = append(ready, task.ID)
		}
	}
	return ready
}

// planText describes plan.json with its issues.
func (e *Engine) planText() string {
	var b strings.Builder
	if p, ok, err := e.peekPlan(); err != nil {
		b.WriteString("Plan: " + readProblem("plan.json", err) + "\n")
	} else if ok {
		b.WriteString("Plan: " + planLine(p) + ".\n")
		for _, is := range p.Issues {
			fmt.Fprintf(&b, "- issue #%d %s: %s", is.ID, is.Status, is.Title)
			if is.Decision != nil {
				fmt.Fprintf(&b, " — decided: %s", *is.Decision)
			}
			b.WriteString("\n")
		}
	} else {
		b.WriteString("Plan: none (no .nexus/state/plan.json).\n")
	}
	return b.String()
}

// tasksText describes tasks.json with its tasks.
func (e *Engine) tasksText() string {
	var b strings.Builder
	if t, ok, err := e.peekTasks(); err != nil {
		b.WriteString("Tasks: " + readProblem("tasks.json", err) + "\n")
	} else if ok {
		b.WriteString("Tasks: " + tasksLine(t))
		if r := readyTasks(t); len(r) > 0 {
			fmt.Fprintf(&b, "; ready: %s", joinIDs(r))
		}
		b.WriteString(".\n")
		for _, task := range t.Tasks {
			fmt.Fprintf(&b, "- task #%d %s: %s", task.ID, task.Status, task.Title)
			if task.Owner != nil && *task.Owner != "" {
				fmt.Fprintf(&b, " (owner %s)", *task.Owner)
			}
			b.WriteString("\n")
		}
	} else {
		b.WriteString("Tasks: none (no .nexus/state/tasks.json).\n")
	}
	return b.String()
}

// Pointers to what returns the rest of a clipped list.
func (e *Engine) morePlan() string {
	return "call " + e.toolRef("plan_status") + " for every issue and its decision"
}

func (e *Engine) moreTasks() string { return "call " + e.toolRef("task_list") + " for every task" }

func (e *Engine) moreKnowledge() string {
	return "call " + e.toolRef("context") + ", or list .nexus/memory/, .nexus/context/ and .nexus/rules/"
}

func (e *Engine) moreAgents() string {
	return "read .nexus/state/" + e.o.Store.L.HarnessID + "/agent-tracker.json"
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("#%d", id)
	}
	return strings.Join(parts, ", ")
}

type knowledgeIndex struct {
	dirs  []string
	files [][]string
}

// knowledge lists the markdown files of memory/, context/ and rules/.
func (e *Engine) knowledge() knowledgeIndex {
	l := e.o.Store.L
	k := knowledgeIndex{dirs: []string{"memory", "context", "rules"}}
	for _, d := range []string{l.MemoryDir(), l.ContextDir(), l.RulesDir()} {
		var names []string
		if ents, err := l.ReadDir(d); err == nil {
			for _, ent := range ents {
				if !ent.IsDir() && strings.HasSuffix(ent.Name(), ".md") {
					names = append(names, ent.Name())
				}
			}
		}
		sort.Strings(names)
		k.files = append(k.files, names)
	}
	return k
}

// maxListed bounds each knowledge directory's listing.
const maxListed = 40

func (k knowledgeIndex) text() string {
	var b strings.Builder
	for i, d := range k.dirs {
		names := k.files[i]
		if len(names) == 0 {
			continue
		}
		shown := names
		more := ""
		if len(shown) > maxListed {
			more = fmt.Sprintf(" and %d more (list .nexus/%s/ for all)", len(shown)-maxListed, d)
			shown = shown[:maxListed]
		}
		fmt.Fprintf(&b, "- .nexus/%s/ (%d): %s%s\n", d, len(names), strings.Join(shown, ", "), more)
	}
	if b.Len() == 0 {
		return ""
	}
	return "Project knowledge (read a file when it bears on the work):\n" + b.String()
}

func (k knowledgeIndex) counts() string {
	var parts []string
	for i, d := range k.dirs {
		parts = append(parts, fmt.Sprintf("%d %s", len(k.files[i]), d))
	}
	return "Knowledge files: " + strings.Join(parts, ", ") + ".\n"
}

// agentDef returns the manifest entry of a role.
func (e *Engine) agentDef(role string) (*vocabulary.Agent, bool) { return e.o.Core.Agent(role) }

// peekPlan reads plan.json for display and targeting only. It skips the
// schema check the store applies (that guards writers; the tools check
// again when they change the file), so a prompt or a spawn does not pay for
// compiling the plan schema. Unparsable JSON is still reported as corrupt.
func (e *Engine) peekPlan() (*state.Plan, bool, error) {
	var p state.Plan
	ok, err := peek(e.o.Store.L, e.o.Store.L.PlanPath(), &p)
	if !ok || err != nil {
		return nil, ok, err
	}
	return &p, true, nil
}

// peekTasks is peekPlan for tasks.json, reading what hooks show of each
// task (state.PeekTasks): not their context, approach or risk, which
// fullTask reads for the one task an agent gets.
func (e *Engine) peekTasks() (*state.Tasks, bool, error) {
	return state.PeekTasks(e.o.Store.L)
}

// fullTask reads one task of a peekTasks result whole (its texts too).
func (e *Engine) fullTask(t *state.Tasks, task *state.Task) *state.Task {
	for i := range t.Tasks {
		if &t.Tasks[i] == task {
			if full, err := state.PeekTask(e.o.Store.L, i); err == nil && full.ID == task.ID {
				return full
			}
			break
		}
	}
	return task
}

func peek(l state.Layout, path string, v any) (bool, error) {
	b, err := l.ReadFile(path, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if err := state.Decode(b, v); err != nil {
		return true, &state.CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()}
	}
	return true, nil
}
