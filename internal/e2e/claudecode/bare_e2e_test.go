//go:build e2e

package claudecode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// TestE2EBareEnvironment: Claude Code started the way an IDE launcher
// starts it (no NEXUS_CORE_DIR, nexus not on PATH, nothing from the shell
// that ran `nexus install claude`) still gets nexus: hooks, MCP tools and
// the gate.
func TestE2EBareEnvironment(t *testing.T) {
	t.Parallel()
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: bare"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_status", Name: mcpName("nx_plan_status"), Input: map[string]any{}}}}},
		fa.Turn{Name: "lead-spawn", When: fa.After("toolu_status"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e design", "subagent_type": "architect", "prompt": "e2e bare architect: save the design.",
		}}}}},
		fa.Turn{Name: "arch-bash", When: fa.Prompt("e2e bare architect:"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_bash", Name: "Bash", Input: map[string]any{"command": "echo design > design.md", "description": "write the design"}}}}},
		fa.Turn{Name: "arch-done", When: fa.After("toolu_bash"), Reply: fa.Reply{Text: "Denied."}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_spawn"), Reply: fa.Reply{Text: "Done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{Bare: true})
	for _, kv := range s.Env {
		if strings.HasPrefix(kv, "NEXUS_") || strings.Contains(kv, binDir) {
			t.Fatalf("the bare environment carries %s", kv)
		}
	}

	r := s.Run("e2e: bare")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	if st := r.Init().MCP; !slices.Contains(st, mcpStatus{Name: "nexus", Status: "connected"}) {
		t.Errorf("MCP servers at start: %+v, want nexus connected", st)
	}
	for _, h := range r.Hooks("SessionStart") {
		if h.Outcome != "success" || strings.Contains(h.Output, "no nexus-core distribution") {
			t.Errorf("SessionStart hook: outcome %q, output %s", h.Outcome, h.Output)
		}
	}
	first, _ := api.Answered("lead")
	if !strings.Contains(first.Messages.AllText(), "nexus is active for this project") {
		t.Error("the model did not get nexus's SessionStart context")
	}
	spawn, _ := api.Answered("lead-spawn")
	if res, ok := spawn.Messages.ToolResult("toolu_status"); !ok || res.IsError {
		t.Errorf("nx_plan_status: %+v", res)
	}
	done, _ := api.Answered("arch-done")
	if res, ok := done.Messages.ToolResult("toolu_bash"); !ok || !res.IsError || !strings.Contains(res.Content.Text(), "nexus denied") {
		t.Errorf("the gate did not deny the architect's write: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(s.Proj, "design.md")); err == nil {
		t.Error("the architect wrote design.md")
	}
}
