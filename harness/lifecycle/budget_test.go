package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

func TestTextLenCountsUTF16(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "—": 1, "😀": 2, "a😀b": 4} {
		if got := TextLen(s); got != want {
			t.Errorf("TextLen(%q) = %d, want %d", s, got, want)
		}
	}
}

// The boundary: max units pass untouched; one more is cut to max with a
// note; a surrogate pair is never split.
func TestCutTextBoundary(t *testing.T) {
	const max = 9999
	exact := strings.Repeat("x", max)
	if got := CutText(exact, max); got != exact {
		t.Fatal("text of exactly max units was changed")
	}
	for _, s := range []string{strings.Repeat("x", max+1), strings.Repeat("line of text\n", 2000), strings.Repeat("😀", max)} {
		got := CutText(s, max)
		if TextLen(got) > max {
			t.Errorf("cut to %d units, over %d", TextLen(got), max)
		}
		if !strings.Contains(got, "nexus cut this message") || !strings.Contains(got, "nx_context") {
			t.Errorf("a cut without saying so: %q", got[len(got)-200:])
		}
		if strings.ContainsRune(got, '\uFFFD') {
			t.Error("a character was split")
		}
	}
}

// A host that counts bytes (Units Bytes): the cut and the fit stay within
// max bytes, and a multi-byte character is never split.
func TestBytesBudget(t *testing.T) {
	const max = 10000
	exact := strings.Repeat("é", max/2)
	if got := Bytes.Cut(exact, max); got != exact {
		t.Fatal("text of exactly max bytes was changed")
	}
	for _, s := range []string{strings.Repeat("é", max/2+1), strings.Repeat("😀", max), strings.Repeat("line of text\n", 2000)} {
		got := Bytes.Cut(s, max)
		if len(got) > max || !strings.Contains(got, "bytes") || strings.ContainsRune(got, '\uFFFD') {
			t.Errorf("cut to %d bytes (max %d), or a character split: %q", len(got), max, got[len(got)-100:])
		}
	}
	// 3,000 é are 3,000 UTF-16 units but 6,000 bytes: over a byte budget
	// of 5,000, the list is clipped.
	e := &Engine{o: Options{Host: HostProfile{ContextBudget: 5000, TextUnits: Bytes}}}
	out := e.fit([]part{{text: "head"}, {text: strings.Repeat("é\n", 3000), more: "call x"}})
	if len(out) > 5000 || !strings.Contains(out, "call x") {
		t.Errorf("fit gave %d bytes for a byte budget of 5000", len(out))
	}
	e.o.Host.TextUnits = UTF16
	if out := e.fit([]part{{text: "head"}, {text: strings.Repeat("é\n", 2000)}}); strings.Contains(out, "more line") {
		t.Error("a UTF-16 budget clipped text within it")
	}
}

func TestFitClipsWithPointersAndKeepsTheSkill(t *testing.T) {
	e, _ := newEngine(t, Options{Host: HostProfile{ContextBudget: 500}})
	var long []string
	for i := range 100 {
		long = append(long, fmt.Sprintf("- task #%d pending: something to do", i))
	}
	skill := strings.Repeat("s", 300)
	out := e.fit([]part{
		{text: skill, alt: "load the skill"},
		{text: "Tasks: 100\n" + strings.Join(long, "\n"), more: "call nx_task_list"},
	})
	if TextLen(out) > 500 {
		t.Fatalf("%d units over the budget", TextLen(out))
	}
	if !strings.HasPrefix(out, skill) {
		t.Error("the skill was dropped although it fits once the list is clipped")
	}
	if !strings.Contains(out, "more line(s) not shown here: call nx_task_list") {
		t.Errorf("clipped without a pointer:\n%s", out)
	}
	// A skill that cannot fit at all is replaced, and the list kept whole.
	out = e.fit([]part{{text: strings.Repeat("s", 600), alt: "load the skill"}, {text: "Tasks: 1\n- task", more: "x"}})
	if out != "load the skill\n\nTasks: 1\n- task" {
		t.Errorf("got %q", out)
	}
	// No budget: everything, joined.
	e0, _ := newEngine(t, Options{})
	if got := e0.fit([]part{{text: skill}, {text: "b"}}); got != skill+"\n\nb" {
		t.Error("unbudgeted fit changed the text")
	}
}

// budgetedOpts is a host with a 9,999-character budget, reminders on its
// spawn tools' results, and a skill loader for skills installed in the
// project's skills/ folder.
func budgetedOpts(project string) Options {
	h := testHost("", "")
	h.ContextBudget, h.LeadReminders, h.SpawnTools = 9999, true, []string{"Agent", "Task"}
	h.SkillLoader = func(skill string) (string, bool) {
		if _, err := os.Stat(filepath.Join(project, ".claude", "skills", skill, "SKILL.md")); err == nil {
			return fmt.Sprintf(`the Skill tool (input {"skill": %q})`, skill), true
		}
		return "", false
	}
	return Options{Host: h}
}

func TestPlanTagWithinBudget(t *testing.T) {
	s := newStore(t, "nexus")
	e, _ := newEngine(t, func() Options { o := budgetedOpts(s.L.Project); o.Store = s; return o }())
	// Not installed: the skill is clipped and says how to get all of it.
	r := handle(t, e, Event{Name: UserMessage, Prompt: "[plan] cache the API"})
	if TextLen(r.Context) > 9999 || !strings.Contains(r.Context, "run `nexus install test`") {
		t.Fatalf("%d units; tail %q", TextLen(r.Context), r.Context[len(r.Context)-300:])
	}
	// Installed: the hook names the skill for the Skill tool.
	skill := filepath.Join(s.L.Project, ".claude", "skills", "nx-plan", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[plan] cache the API"})
	if !strings.Contains(r.Context, `load them now with the Skill tool (input {"skill": "nx-plan"})`) || TextLen(r.Context) > 9999 {
		t.Fatalf("got:\n%s", r.Context)
	}
	if !strings.Contains(r.Context, "nexus status:") {
		t.Error("the status block was dropped")
	}
	// A big status block is clipped with pointers to the tools.
	var issues []string
	for i := range 300 {
		issues = append(issues, fmt.Sprintf("issue number %d with a rather long title to fill the block", i))
	}
	putPlan(t, s, issues...)
	r = handle(t, e, Event{Name: UserMessage, Prompt: "[run]"})
	if TextLen(r.Context) > 9999 || !strings.Contains(r.Context, "mcp__nexus__nx_plan_status") {
		t.Fatalf("%d units, pointer missing", TextLen(r.Context))
	}
	// Compaction re-injection likewise.
	r = handle(t, e, Event{Name: ContextCompact, Source: "compact"})
	if TextLen(r.Context) > 9999 || !strings.Contains(r.Context, "not shown here") {
		t.Fatalf("compaction: %d units", TextLen(r.Context))
	}
}

// Claude Code's compaction agent stops without ever starting and without
// an agent type: not tracked (it used to appear as "(unnamed)").
func TestPhantomSubagentStopIgnored(t *testing.T) {
	e, s := newEngine(t, Options{})
	handle(t, e, Event{Name: SessionStart, SessionID: "s1"})
	r := handle(t, e, Event{Name: SubagentComplete, AgentID: "acompact-1"})
	entries, _, _ := s.ReadTracker()
	if len(entries) != 0 || !r.Empty() {
		t.Fatalf("tracker %+v, reply %+v", entries, r)
	}
	// A named agent nexus missed is still recorded.
	handle(t, e, Event{Name: SubagentComplete, AgentID: "t1", AgentType: "tester"})
	if entries, _, _ = s.ReadTracker(); len(entries) != 1 {
		t.Fatalf("tracker %+v", entries)
	}
}

func TestResumeOfSameSessionIsNoOrphan(t *testing.T) {
	e, s := newEngine(t, Options{})
	handle(t, e, Event{Name: SessionStart, SessionID: "s1", Source: "startup"})
	putPlan(t, s, "an issue")
	handle(t, e, Event{Name: SubagentSpawn, AgentID: "a1", AgentType: "architect"})
	r := handle(t, e, Event{Name: SessionStart, SessionID: "s1", Source: "resume"})
	if strings.Contains(r.Context, "earlier session") || r.Notice != "" {
		t.Errorf("resume of the same session warned:\n%s\n%s", r.Context, r.Notice)
	}
	if !strings.Contains(r.Context, "This session's plan is open") {
		t.Errorf("resume does not mention the open plan:\n%s", r.Context)
	}
	if entries, _, _ := s.ReadTracker(); len(entries) != 1 {
		t.Errorf("resume reset the tracker: %+v", entries)
	}
	// Another session still gets the warning.
	r = handle(t, e, Event{Name: SessionStart, SessionID: "s2", Source: "resume"})
	if !strings.Contains(r.Context, "earlier session") {
		t.Errorf("a different session was not warned:\n%s", r.Context)
	}
}

func TestSessionStartBriefsLead(t *testing.T) {
	e, _ := newEngine(t, Options{Host: testHost("", "")})
	r := handle(t, e, Event{Name: SessionStart, SessionID: "s1"})
	for _, want := range []string{"You are Lead", "subagent_type = the role id", "architect (how", "tester (check", "Unplanned edits are denied", "mcp__nexus__nx_task_add"} {
		if !strings.Contains(r.Context, want) {
			t.Errorf("SessionStart lacks %q:\n%s", want, r.Context)
		}
	}
}

// The verification reminder reaches Lead's model on its next Agent (or
// Task) result, once, and not inside a subagent's calls.
func TestReminderRidesOnLeadsAgentResult(t *testing.T) {
	s := newStore(t, "nexus")
	o := budgetedOpts(s.L.Project)
	o.Store = s
	e, _ := newEngine(t, o)
	ctx := context.Background()
	owner, accept := "engineer", "tests pass"
	if err := s.Update(ctx, []string{s.L.TasksPath()}, func(tx *state.Tx) error {
		return tx.PutTasks(&state.Tasks{Tasks: []state.Task{{ID: 1, Title: "Add cache", Context: "c", Status: state.TaskInProgress, Owner: &owner, Acceptance: &accept}}})
	}); err != nil {
		t.Fatal(err)
	}
	handle(t, e, Event{Name: SubagentSpawn, AgentID: "e1", AgentType: "engineer"})
	if r := handle(t, e, Event{Name: SubagentComplete, AgentID: "e1", AgentType: "engineer"}); !r.Empty() {
		t.Errorf("SubagentStop replied %+v; nothing there reaches a model", r)
	}
	if r := handle(t, e, Event{Name: PostToolUse, AgentID: "x1", AgentType: "architect", Tool: "Agent", Status: StatusOK}); strings.Contains(r.Context, "verified") {
		t.Error("the reminder went to a subagent")
	}
	r := handle(t, e, Event{Name: PostToolUse, Tool: "Agent", Status: StatusOK})
	if !strings.Contains(r.Context, "task #1 (Add cache) has acceptance criteria") {
		t.Fatalf("Lead's Agent result lacks the reminder: %+v", r)
	}
	if r := handle(t, e, Event{Name: PostToolUse, Tool: "Task", Status: StatusOK}); r.Context != "" {
		t.Errorf("the reminder was given twice: %q", r.Context)
	}
}

// Inside the nexus Claude Code plugin, the Lead is told the plugin's names
// of the roles and tools, and denials name the plugin's tools.
func TestPluginNames(t *testing.T) {
	e, _ := newEngine(t, Options{Host: testHost("nexus:", "mcp__plugin_nexus_nexus__")})
	r := handle(t, e, Event{Name: SessionStart, SessionID: "s1"})
	for _, want := range []string{"subagent_type = nexus:<role id>", "mcp__plugin_nexus_nexus__nx_plan_status"} {
		if !strings.Contains(r.Context, want) {
			t.Errorf("SessionStart lacks %q:\n%s", want, r.Context)
		}
	}
	if strings.Contains(r.Context, "mcp__nexus__") {
		t.Errorf("SessionStart names the non-plugin tools:\n%s", r.Context)
	}
	r = handle(t, e, Event{Name: PreToolUse, AgentID: "a1", AgentType: "nexus:architect", Tool: "Write", ToolInput: map[string]any{"file_path": "/x/y.go"}})
	if r.Decision != "deny" || !strings.Contains(r.Reason, "mcp__plugin_nexus_nexus__nx_artifact_write") {
		t.Errorf("denial %+v", r)
	}
}

// FuzzFit: whatever the parts, fit stays within the budget unless the
// fixed parts alone exceed it, and CutText always does.
func FuzzFit(f *testing.F) {
	f.Add("fixed", "line a\nline b\nline c", "skill text", 20)
	f.Add("", strings.Repeat("x\n", 50), strings.Repeat("é", 40), 30)
	f.Fuzz(func(t *testing.T, fixed, list, skill string, budget int) {
		if budget < 1 || budget > 5000 {
			return
		}
		e := &Engine{o: Options{Host: HostProfile{ContextBudget: budget}}}
		parts := []part{{text: fixed}, {text: skill, alt: "load it"}, {text: list, more: "call x"}}
		out := e.fit(parts)
		floor := TextLen(strings.TrimRight(fixed, "\n")) + TextLen("load it") + TextLen(firstLine(list)) + TextLen(moreLine(len(strings.Split(list, "\n")), "call x")) + 8
		if TextLen(out) > budget && floor <= budget {
			t.Fatalf("fit gave %d units for a budget of %d (floor %d)", TextLen(out), budget, floor)
		}
		if c := CutText(out, budget); TextLen(c) > budget && budget > 300 {
			t.Fatalf("CutText gave %d units for %d", TextLen(c), budget)
		}
	})
}

// A skill the model loads with the Skill tool becomes the active skill;
// after compaction nexus does not inject it again (the host re-attaches
// it), and a subagent's Skill call changes nothing.
func TestSkillToolActivates(t *testing.T) {
	s := newStore(t, "nexus")
	o := budgetedOpts(s.L.Project)
	o.Store, o.Host.SkillTool = s, "Skill"
	e, _ := newEngine(t, o)
	handle(t, e, Event{Name: PostToolUse, AgentID: "a1", AgentType: "architect", Tool: "Skill", ToolInput: map[string]any{"skill": "nx-run"}, Status: StatusOK})
	if _, ok := e.readActiveSkill(); ok {
		t.Fatal("a subagent's Skill call changed the active skill")
	}
	handle(t, e, Event{Name: PostToolUse, Tool: "Skill", ToolInput: map[string]any{"skill": "nexus:nx-run"}, Status: StatusOK})
	a, ok := e.readActiveSkill()
	if !ok || a.Skill != "nx-run" || !a.HostLoaded {
		t.Fatalf("active skill %+v", a)
	}
	r := handle(t, e, Event{Name: ContextCompact, Source: "compact"})
	if !strings.Contains(r.Context, "loaded with the Skill tool") || strings.Contains(r.Context, "nexus activated the nx-run skill") {
		t.Errorf("compaction:\n%s", r.Context)
	}
	handle(t, e, Event{Name: PostToolUse, Tool: "Skill", ToolInput: map[string]any{"skill": "someone-elses"}, Status: StatusOK})
	if a, _ := e.readActiveSkill(); a.Skill != "nx-run" {
		t.Error("a skill outside the distribution became active")
	}
	// Activated by its tag first, then loaded: still the tag's record.
	handle(t, e, Event{Name: UserMessage, Prompt: "[plan] x"})
	handle(t, e, Event{Name: PostToolUse, Tool: "Skill", ToolInput: map[string]any{"skill": "nx-plan"}, Status: StatusOK})
	if a, _ := e.readActiveSkill(); a.Tag != "[plan]" || !a.HostLoaded {
		t.Errorf("active skill %+v", a)
	}
}

// A host whose skill tool names the skill in another argument (OpenCode's
// skill tool: {"name": ...}) says so in its profile.
func TestSkillToolArgument(t *testing.T) {
	s := newStore(t, "nexus")
	o := budgetedOpts(s.L.Project)
	o.Store, o.Host.SkillTool, o.Host.SkillArg = s, "skill", "name"
	e, _ := newEngine(t, o)
	handle(t, e, Event{Name: PostToolUse, Tool: "skill", ToolInput: map[string]any{"skill": "nx-run"}, Status: StatusOK})
	if _, ok := e.readActiveSkill(); ok {
		t.Fatal("the skill was read from the argument the host does not use")
	}
	handle(t, e, Event{Name: PostToolUse, Tool: "skill", ToolInput: map[string]any{"name": "nx-run"}, Status: StatusOK})
	if a, ok := e.readActiveSkill(); !ok || a.Skill != "nx-run" || !a.HostLoaded || a.Tag != "skill tool" {
		t.Fatalf("active skill %+v", a)
	}
}

func TestSlashCommandActivates(t *testing.T) {
	s := newStore(t, "nexus")
	o := budgetedOpts(s.L.Project)
	o.Store, o.Host.SkillTool = s, "Skill"
	e, _ := newEngine(t, o)
	handle(t, e, Event{Name: UserMessage, Prompt: "/compact"})
	if _, ok := e.readActiveSkill(); ok {
		t.Fatal("a host command became the active skill")
	}
	handle(t, e, Event{Name: UserMessage, Prompt: "/nexus:nx-sync now"})
	if a, ok := e.readActiveSkill(); !ok || a.Skill != "nx-sync" || !a.HostLoaded {
		t.Fatalf("active skill %+v", a)
	}
}
