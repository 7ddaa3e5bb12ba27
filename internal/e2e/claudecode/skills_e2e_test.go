//go:build e2e

package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// skillBody is a rendered SKILL.md without its front matter.
func skillBody(t *testing.T, proj, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(proj, ".claude/skills", id, "SKILL.md"))
	if err != nil {
		t.Fatalf("nexus install claude did not render the %s skill: %v", id, err)
	}
	s := string(b)
	if rest, ok := strings.CutPrefix(s, "---\n"); ok {
		if _, body, ok := strings.Cut(rest, "\n---\n"); ok {
			s = body
		}
	}
	return strings.TrimSpace(s)
}

// hookContext returns the text Claude Code gave the model for an event's
// additionalContext in a request ("" when none): from its label to the
// next blank-line-separated section Claude Code appends.
func hookContext(r *fa.MessagesRequest, hookEvent string) string {
	all := r.AllText()
	label := hookEvent + " hook additional context: "
	i := strings.LastIndex(all, label)
	if i < 0 {
		return ""
	}
	return all[i+len(label):]
}

// TestE2EPlanSkill: "[plan]" activates nx-plan, what the hook injects stays
// under Claude Code's limit and arrives whole, and the model gets the whole
// skill (here through the Skill tool, as the hook tells it).
func TestE2EPlanSkill(t *testing.T) {
	t.Parallel()
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("[plan] e2e"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_skill", Name: "Skill", Input: map[string]any{"skill": "nx-plan"}}}}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_skill"), Reply: fa.Reply{Text: "Planning."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	body := skillBody(t, s.Proj, "nx-plan")

	s.Run("[plan] e2e: plan the storage layer")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	first, _ := api.Answered("lead")
	ctx := hookContext(first.Messages, "UserPromptSubmit")
	if ctx == "" {
		t.Fatal("the model got no UserPromptSubmit context for [plan]")
	}
	if !strings.Contains(ctx, "nx-plan") {
		t.Errorf("the UserPromptSubmit context does not name nx-plan: %.300q", ctx)
	}
	// Claude Code passed every hook context on whole (checked for every
	// session by newSession; repeated here because it is this test's point).
	if strings.Contains(first.Messages.AllText(), e2ekit.PersistedMarker) {
		t.Errorf("Claude Code cut a hook context to a preview: %.600q", ctx)
	}
	after, _ := api.Answered("lead-final")
	res, ok := after.Messages.ToolResult("toolu_skill")
	if !ok || res.IsError {
		t.Fatalf("Skill nx-plan: %+v", res)
	}
	if got := after.Messages.AllText(); !strings.Contains(got, body) {
		t.Errorf("the model did not get the whole nx-plan skill (%d characters)", len(body))
	}
}
