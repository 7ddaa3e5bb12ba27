//go:build e2e

package claudecode

import (
	"strings"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// TestE2ECompact: after /compact, Claude Code's SessionStart (source
// compact) re-injects nexus's state (the active skill, the tracked agents)
// whole, and Claude Code's own compaction agent is not tracked as an agent.
func TestE2ECompact(t *testing.T) {
	t.Parallel()
	var proj string
	var snap snapshot
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: before compact"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e design", "subagent_type": "architect", "prompt": "e2e compact architect: review the layout.",
		}}}}},
		fa.Turn{Name: "architect", When: fa.Prompt("e2e compact architect:"), Reply: fa.Reply{Text: "The layout is sound."}},
		fa.Turn{Name: "lead-bash", When: fa.After("toolu_spawn"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_bash", Name: "Bash", Input: map[string]any{"command": "ls", "description": "list"}}}}},
		fa.Turn{Name: "lead-done", When: fa.After("toolu_bash"), Reply: fa.Reply{Text: "The architect agrees."}},
		fa.Turn{Name: "after", When: fa.Prompt("e2e: after compact"), Do: func(*fa.MessagesRequest) fa.Reply {
			snap.take(proj)
			return fa.Reply{Text: "Continuing."}
		}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	proj = s.Proj

	s.Converse([]string{"[plan] e2e: before compact", "/compact", "e2e: after compact"})

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	after, _ := api.Answered("after")
	all := after.Messages.AllText()
	cmd := strings.Index(all, "<command-name>/compact</command-name>")
	label := strings.LastIndex(all, "SessionStart hook additional context: ")
	if cmd < 0 || label < cmd {
		t.Fatalf("no SessionStart context after /compact reached the model (compact command at %d, context at %d)", cmd, label)
	}
	ctx := hookContext(after.Messages, "SessionStart")
	// Whole: newSession's check fails the test when Claude Code cut it.
	for _, want := range []string{"nx-plan", "architect"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("the re-injected context does not mention %s: %.1500q", want, ctx)
		}
	}
	if strings.Contains(ctx, "(unnamed)") {
		t.Errorf("the re-injected context lists an unnamed agent: %.1500q", ctx)
	}
	if len(snap.tracker) == 0 {
		t.Fatalf("agent-tracker.json after /compact: %s", snap.raw)
	}
	for _, e := range snap.tracker {
		if e.AgentName == "" {
			t.Errorf("agent-tracker.json tracks Claude Code's compaction as an agent: %+v", e)
		}
	}
}
