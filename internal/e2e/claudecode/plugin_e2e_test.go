//go:build e2e

package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// TestE2EPluginPackage: the Claude Code plugin that `nexus install claude
// --plugin` writes passes `claude plugin validate --strict` (marketplace and
// plugin manifests), installs through `claude plugin marketplace add` and
// `claude plugin install`, and then works in a session of a project where
// nexus was never installed: hooks, MCP tools under the plugin's names and
// the role agents as nexus:<id>.
func TestE2EPluginPackage(t *testing.T) {
	t.Parallel()
	var proj string
	var snap snapshot
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: plugin"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_status", Name: "mcp__plugin_nexus_nexus__nx_plan_status", Input: map[string]any{}}}}},
		fa.Turn{Name: "lead-spawn", When: fa.After("toolu_status"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e design", "subagent_type": "nexus:architect", "prompt": "e2e plugin architect: report.",
		}}}}},
		fa.Turn{Name: "architect", When: fa.Prompt("e2e plugin architect:"), Reply: fa.Reply{Text: "Architect via plugin."}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_spawn"), Do: func(*fa.MessagesRequest) fa.Reply {
			snap.take(proj)
			return fa.Reply{Text: "Done."}
		}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{NoNexus: true})
	proj = s.Proj
	dir := filepath.Join(t.TempDir(), "nexus-plugin")
	cmd := exec.Command(filepath.Join(binDir, "nexus"), "install", "claude", "--plugin", dir)
	cmd.Dir = s.Proj
	cmd.Env = append(s.Env, "NEXUS_CORE_DIR="+testenv.CoreDir(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nexus install claude --plugin: %v\n%s", err, out)
	}
	claude := func(args ...string) {
		t.Helper()
		c := exec.Command(s.Claude, args...)
		c.Dir, c.Env = s.Proj, s.Env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	claude("plugin", "validate", "--strict", dir)
	claude("plugin", "validate", "--strict", filepath.Join(dir, ".claude-plugin", "plugin.json"))
	claude("plugin", "marketplace", "add", dir)
	claude("plugin", "install", "nexus@nexus-local")
	if _, err := os.Stat(filepath.Join(s.Proj, ".claude", "settings.json")); err == nil {
		t.Fatal("the project has nexus settings of its own; the session would not test the plugin")
	}

	r := s.Run("e2e: plugin")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	if !slices.ContainsFunc(r.Init().MCP, func(m mcpStatus) bool { return strings.Contains(m.Name, "nexus") && m.Status == "connected" }) {
		t.Errorf("MCP servers at start: %+v, want the plugin's nexus connected", r.Init().MCP)
	}
	first, _ := api.Answered("lead")
	if !strings.Contains(first.Messages.AllText(), "nexus is active for this project") {
		t.Error("the plugin's SessionStart hook context did not reach the model")
	}
	if !strings.Contains(first.Messages.AllText(), "- nexus:architect:") {
		t.Error("the Lead is not offered the agent type nexus:architect")
	}
	spawn, _ := api.Answered("lead-spawn")
	if res, ok := spawn.Messages.ToolResult("toolu_status"); !ok || res.IsError {
		t.Errorf("nx_plan_status through the plugin: %+v", res)
	}
	final, _ := api.Answered("lead-final")
	if res, ok := final.Messages.ToolResult("toolu_spawn"); !ok || res.IsError || !strings.Contains(res.Content.Text(), "Architect via plugin.") {
		t.Errorf("spawn of nexus:architect: %+v", res)
	}
	// Tracked under the role's bare id (the schema's agent_name pattern).
	if !slices.ContainsFunc(snap.tracker, func(e trackerEntry) bool { return e.AgentName == "architect" }) {
		t.Errorf("agent-tracker.json has no architect entry: %s", snap.raw)
	}
}
