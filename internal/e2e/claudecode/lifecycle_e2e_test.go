//go:build e2e

package claudecode

import (
	"strings"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// TestE2ELifecycle: what the Lead model is told by the lifecycle. The
// SessionStart context makes it the Lead, names the roles it can spawn and
// states the unplanned-edit rule; when a subagent finishes a task with
// acceptance criteria and no tester or reviewer is scheduled, the reminder
// reaches the Lead's conversation; and a --continue of the same
// conversation is not warned about its own open task cycle.
func TestE2ELifecycle(t *testing.T) {
	t.Parallel()
	api := fa.New(
		fa.Turn{Name: "task", When: fa.Prompt("e2e: lifecycle"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_task", Name: mcpName("nx_task_add"), Input: map[string]any{
			"title": "Build the parser", "context": "e2e", "acceptance": "the parser tests pass", "owner": "engineer",
		}}}}},
		fa.Turn{Name: "spawn", When: fa.After("toolu_task"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e build", "subagent_type": "engineer", "prompt": "e2e lifecycle engineer: build the parser.",
		}}}}},
		fa.Turn{Name: "engineer", When: fa.Prompt("e2e lifecycle engineer:"), Reply: fa.Reply{Text: "The parser is built."}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_spawn"), Reply: fa.Reply{Text: "Built."}},
		fa.Turn{Name: "resumed", When: fa.Prompt("e2e: resumed"), Reply: fa.Reply{Text: "Resumed."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})

	first := s.Run("e2e: lifecycle")
	second := s.Run("e2e: resumed", "--continue")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	task, _ := api.Answered("task")
	ctx := hookContext(task.Messages, "SessionStart")
	for _, want := range append([]string{"You are Lead", "Agent tool", "Unplanned edits are denied"}, roles...) {
		if !strings.Contains(ctx, want) {
			t.Errorf("the SessionStart context lacks %q: %.1500q", want, ctx)
		}
	}
	final, _ := api.Answered("lead-final")
	const reminder = "has acceptance criteria and no tester or reviewer task is scheduled"
	if !strings.Contains(final.Messages.AllText(), reminder) {
		t.Errorf("the Lead model did not get the reminder to have task #1 verified")
	}
	for _, h := range first.Hooks("SessionStart") {
		if strings.Contains(h.Output, "earlier session") {
			t.Errorf("the first session was warned about an earlier session: %s", h.Output)
		}
	}
	starts := second.Hooks("SessionStart")
	if len(starts) == 0 {
		t.Fatal("the continued session ran no SessionStart hook")
	}
	for _, h := range starts {
		if h.HookName != "SessionStart:resume" {
			t.Errorf("the continued session's SessionStart hook is %q, want SessionStart:resume", h.HookName)
		}
		if strings.Contains(h.Output, "earlier session") {
			t.Errorf("--continue of the same conversation was warned about an earlier session: %s", h.Output)
		}
	}
	resumed, _ := api.Answered("resumed")
	if !strings.Contains(resumed.Messages.AllText(), "Built.") {
		t.Error("the continued session does not carry the first conversation")
	}
}
