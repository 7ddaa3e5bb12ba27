package lifecycle

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

// A host that fires no spawn event when it resumes a subagent shows the
// resume only as a message reaching the completed instance: it counts as a
// resume (resume_count, running again, the briefing again), never as a
// user message (no tag fires).
func TestSubagentMessageResumes(t *testing.T) {
	e, s := newEngine(t, Options{Host: testHost("", "")})
	handle(t, e, Event{Name: SessionStart, Source: "startup"})
	handle(t, e, Event{Name: SubagentSpawn, AgentID: "a1", AgentType: "architect"})
	tracker := func() []state.TrackerEntry {
		t.Helper()
		entries, _, err := s.ReadTracker()
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}

	// The first message of a running instance: nothing to do, no tag.
	r := handle(t, e, Event{Name: UserMessage, AgentID: "a1", AgentType: "architect", Prompt: "[d] not a decision"})
	if !r.Empty() {
		t.Errorf("a running subagent's message got %+v", r)
	}
	if got := tracker(); len(got) != 1 || got[0].Status != state.AgentRunning || *got[0].ResumeCount != 0 {
		t.Errorf("tracker after the first message: %+v", got)
	}

	handle(t, e, Event{Name: SubagentComplete, AgentID: "a1", AgentType: "architect"})
	r = handle(t, e, Event{Name: UserMessage, AgentID: "a1", AgentType: "architect", Prompt: "[plan] follow up"})
	if !strings.Contains(r.Context, "the architect agent") || strings.Contains(r.Context, "nexus activated") {
		t.Errorf("a resumed subagent's context:\n%s", r.Context)
	}
	got := tracker()
	if len(got) != 1 || got[0].Status != state.AgentRunning || *got[0].ResumeCount != 1 || got[0].LastResumedAt == "" {
		t.Errorf("tracker after the resume: %+v", got)
	}
	if state.Exists(e.activeSkillPath()) {
		t.Error("a subagent's message activated a skill")
	}
	// A second message while it runs again is not another resume.
	handle(t, e, Event{Name: UserMessage, AgentID: "a1", AgentType: "architect", Prompt: "more"})
	if got := tracker(); *got[0].ResumeCount != 1 {
		t.Errorf("resume counted twice: %+v", got)
	}
	handle(t, e, Event{Name: SubagentComplete, AgentID: "a1", AgentType: "architect"})
	handle(t, e, Event{Name: UserMessage, AgentID: "a1", AgentType: "architect", Prompt: "again"})
	if got := tracker(); got[0].Status != state.AgentRunning || *got[0].ResumeCount != 2 {
		t.Errorf("second resume: %+v", got)
	}

	// An instance nexus never saw start is tracked from its message on.
	r = handle(t, e, Event{Name: UserMessage, AgentID: "e9", AgentType: "engineer", Prompt: "hi"})
	if got := tracker(); len(got) != 2 || got[1].AgentName != "engineer" || got[1].Status != state.AgentRunning {
		t.Errorf("untracked instance: %+v", got)
	}
	if !strings.Contains(r.Context, "engineer agent") {
		t.Errorf("untracked instance's briefing: %s", r.Context)
	}
}

// A call the host reports to no post_tool_use (Unfollowed) is logged when
// the gate allows it, so its files count in files_touched; a denied one
// stays denied.
func TestUnfollowedCallLoggedAtPreToolUse(t *testing.T) {
	h := testHost("", "")
	h.Unfollowed = func(tool string, input map[string]any) bool { return tool == "Write" && input["unfollowed"] == true }
	e, s := newEngine(t, Options{Host: h})
	handle(t, e, Event{Name: SessionStart, Source: "startup"})
	if err := os.WriteFile(s.L.TasksPath(), []byte(`{"goal":"g","decisions":[],"tasks":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	handle(t, e, Event{Name: SubagentSpawn, AgentID: "e1", AgentType: "engineer"})
	handle(t, e, Event{Name: SubagentSpawn, AgentID: "a1", AgentType: "architect"})
	dir := s.L.Project
	r := handle(t, e, Event{Name: PreToolUse, AgentID: "e1", AgentType: "engineer", Tool: "Write", ToolInput: map[string]any{"file_path": dir + "/hd.txt", "unfollowed": true}})
	if r.Decision != "" {
		t.Fatalf("engineer's write denied: %+v", r)
	}
	// A followed call is logged by its post_tool_use only.
	handle(t, e, Event{Name: PreToolUse, AgentID: "e1", AgentType: "engineer", Tool: "Write", ToolInput: map[string]any{"file_path": dir + "/later.txt"}})
	r = handle(t, e, Event{Name: PreToolUse, AgentID: "a1", AgentType: "architect", Tool: "Write", ToolInput: map[string]any{"file_path": dir + "/no.txt", "unfollowed": true}})
	if r.Decision != "deny" {
		t.Fatalf("architect's write allowed: %+v", r)
	}
	for id, want := range map[string][]string{"e1": {"hd.txt"}, "a1": {}} {
		got, err := FilesTouched(s, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("files touched by %s: %q %v, want %q", id, got, err, want)
		}
	}
}
