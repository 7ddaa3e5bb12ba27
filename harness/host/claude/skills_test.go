package claude

import (
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/tags"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Every shipped skill body expands in Claude Code's spelling, leaving no
// macro behind, and names Claude Code's tools.
func TestClaudeSpellsShippedSkills(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	p := tags.NewProfile(Spelling, tags.New(core.Tags()), "nx_")
	for _, s := range core.Manifest().Skills {
		st, err := tags.ActivateSkill(core, s.ID, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if st.ExpandErr != nil {
			t.Errorf("%s: %v", s.ID, st.ExpandErr)
		}
		if strings.Contains(st.Text, "{{") {
			t.Errorf("%s: a macro is left: %q", s.ID, st.Text[strings.Index(st.Text, "{{"):][:60])
		}
	}
	st, err := tags.ActivateSkill(core, "nx-plan", "auto", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nx-plan skill in auto mode", "[plan:auto]", `Agent tool (subagent_type "Explore"`, "Resuming a subagent", "mcp__nexus__nx_plan_start"} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("nx-plan text lacks %q", want)
		}
	}
	st, _ = tags.ActivateSkill(core, "nx-sync", "", p)
	if !strings.Contains(st.Text, "Agent tool (subagent_type \"writer\", description \"writer-sync-context\", prompt \"Update .nexus/context/ documents") {
		t.Errorf("nx-sync heredoc not rendered:\n%s", st.Text)
	}
}
