package gate

import (
	"strings"
	"testing"
)

// Plugin tools are gated by the classes their manifests declare, under the
// name Claude Code shows them by (mcp__<server>__<name>) or the bare name.
func TestPluginToolClasses(t *testing.T) {
	core := loadCore(t)
	asked := 0
	g, _, err := New(Options{Core: core, Host: HostClaude, Config: configWith(t, ""), PluginTool: func(name string) ([]string, bool) {
		asked++
		switch name {
		case "edit_apply":
			return []string{"file_modification"}, true
		case "check_decision":
			return []string{}, true
		}
		return nil, false
	}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, role string
		decision   string
		capability string
	}{
		{"mcp__nexus__edit_apply", "architect", Deny, "no_file_edit"},
		{"mcp__other__edit_apply", "architect", Deny, "no_file_edit"},
		{"edit_apply", "reviewer", Deny, "no_file_edit"},
		{"mcp__nexus__edit_apply", "engineer", Deny, ""}, // allowed by capability; no tasks.json: unplanned edit
		{"mcp__nexus__check_decision", "architect", Allow, ""},
		{"mcp__nexus__unknown_tool", "architect", Allow, ""},
	}
	for _, c := range cases {
		cl := g.Classify(c.tool, map[string]any{}, nil, t.TempDir())
		v := g.Check(Call{Role: c.role, Classification: cl}, false, "/p/.nexus")
		if v.Decision != c.decision || v.Capability != c.capability {
			t.Errorf("%s for %s: %+v", c.tool, c.role, v)
		}
		if v.Capability != "" && !strings.Contains(v.Reason, "nexus denied "+c.tool) {
			t.Errorf("reason %q does not name the tool", v.Reason)
		}
	}
	// With tasks.json the engineer's call is allowed.
	cl := g.Classify("mcp__nexus__edit_apply", nil, nil, "")
	if v := g.Check(Call{Role: "engineer", Classification: cl}, true, "/p/.nexus"); v.Decision != Allow {
		t.Errorf("engineer with tasks: %+v", v)
	}
	// Host tools and nexus's own never ask the plugins.
	before := asked
	g.Classify("Bash", map[string]any{"command": "ls"}, nil, "")
	g.Classify("mcp__nexus__nx_task_add", nil, nil, "")
	if asked != before {
		t.Errorf("the plugin lookup ran for a host or nexus tool")
	}
}
