package claude

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// The gate over Claude Code's tools: the gate's rules with this package's
// capability map, as a Claude Code hook applies them.

func loadCore(t *testing.T) *vocabulary.Core {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// gateOptions completes a test's settings with the distribution, Claude
// Code's map, the default tool prefix and the MCP server's name.
func gateOptions(core *vocabulary.Core, o gate.Options) gate.Options {
	o.Core, o.HostMap, o.ToolPrefix, o.ToolRefPrefix = core, CapabilityMap(), "nx_", "mcp__nexus__"
	return o
}

func TestCheck(t *testing.T) {
	core := loadCore(t)
	project := t.TempDir()
	nexusDir := filepath.Join(project, ".nexus")
	type tc struct {
		name       string
		opts       gate.Options // the configured settings
		role       string
		tool       string
		input      map[string]any
		declared   []string
		tasks      bool
		decision   string
		rule       string
		capability string
		reason     []string // substrings of the reason
	}
	edit := map[string]any{"file_path": filepath.Join(project, "src/a.go"), "old_string": "a", "new_string": "b"}
	tests := []tc{
		{name: "architect edit", role: "architect", tool: "Edit", input: edit, tasks: true, decision: gate.Deny, rule: gate.RuleCapability, capability: "no_file_edit",
			reason: []string{"Edit", "the architect agent", "no_file_edit", "workspace_write_denial", "partial_file_edit"}},
		{name: "architect write", role: "architect", tool: "Write", input: map[string]any{"file_path": "/x"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "architect notebook", role: "architect", tool: "NotebookEdit", input: map[string]any{"notebook_path": "/n.ipynb"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "architect read", role: "architect", tool: "Read", input: map[string]any{"file_path": "/x"}, tasks: true, decision: gate.Allow},
		{name: "architect grep", role: "architect", tool: "Grep", tasks: true, decision: gate.Allow},
		{name: "architect bash read", role: "architect", tool: "Bash", input: map[string]any{"command": "git log --oneline | head"}, tasks: true, decision: gate.Allow},
		{name: "architect bash write", role: "architect", tool: "Bash", input: map[string]any{"command": "echo x > notes.txt"}, tasks: true, decision: gate.Deny, capability: "no_file_edit",
			reason: []string{"Bash", "output redirection to notes.txt"}},
		{name: "tester sed -i", role: "tester", tool: "Bash", input: map[string]any{"command": "sed -i 's/a/b/' x.go"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "architect task close", role: "architect", tool: "mcp__nexus__nx_task_close", tasks: true, decision: gate.Deny, capability: "no_task_update",
			reason: []string{"nexus_task_state_transition", "Lead"}},
		{name: "architect task update", role: "architect", tool: "mcp__nexus__nx_task_update", tasks: true, decision: gate.Deny, capability: "no_task_update"},
		{name: "engineer task add", role: "engineer", tool: "mcp__nexus__nx_task_add", tasks: true, decision: gate.Deny, capability: "no_task_create"},
		{name: "engineer task add, bare prefix", role: "engineer", tool: "nx_task_add", tasks: true, decision: gate.Deny, capability: "no_task_create"},
		{name: "engineer task update", role: "engineer", tool: "mcp__nexus__nx_task_update", tasks: true, decision: gate.Allow},
		{name: "engineer edit", role: "engineer", tool: "Edit", input: edit, tasks: true, decision: gate.Allow},
		{name: "researcher artifact", role: "researcher", tool: "mcp__nexus__nx_artifact_write", input: map[string]any{"filename": "f.md", "content": "x"}, decision: gate.Allow},
		{name: "reviewer task list", role: "reviewer", tool: "mcp__nexus__nx_task_list", tasks: true, decision: gate.Allow},
		{name: "foreign mcp tool", role: "architect", tool: "mcp__other__write_file", tasks: true, decision: gate.Allow},
		{name: "non-manifest role", role: "general-purpose", tool: "Edit", input: edit, tasks: true, decision: gate.Allow},
		{name: "lead edit planned", role: "", tool: "Edit", input: edit, tasks: true, decision: gate.Allow},
		{name: "lead task add", role: "", tool: "mcp__nexus__nx_task_add", decision: gate.Allow},

		// Unplanned edits.
		{name: "lead edit unplanned", role: "", tool: "Edit", input: edit, decision: gate.Deny, rule: gate.RuleUnplannedEdit,
			reason: []string{"src/a.go", "planned task cycle", "tasks.json", "gate.unplanned_edit"}},
		{name: "engineer edit unplanned", role: "engineer", tool: "Edit", input: edit, decision: gate.Deny, rule: gate.RuleUnplannedEdit},
		{name: "lead memory write unplanned", role: "", tool: "Write", input: map[string]any{"file_path": filepath.Join(nexusDir, "memory", "m.md")}, decision: gate.Allow},
		{name: "lead relative rules write unplanned", role: "", tool: "Bash", input: map[string]any{"command": "cat > .nexus/rules/r.md <<'EOF'\nx\nEOF"}, decision: gate.Allow},
		{name: "lead glob rm unplanned", role: "", tool: "Bash", input: map[string]any{"command": "rm .nexus/memory/*.md"}, decision: gate.Deny, rule: gate.RuleUnplannedEdit},
		{name: "lead escape unplanned", role: "", tool: "Write", input: map[string]any{"file_path": filepath.Join(nexusDir, "..", "x")}, decision: gate.Deny, rule: gate.RuleUnplannedEdit},
		{name: "lead read unplanned", role: "", tool: "Read", input: map[string]any{"file_path": "/x"}, decision: gate.Allow},
		{name: "unplanned warn", opts: gate.Options{UnplannedEdit: "warn"}, role: "", tool: "Edit", input: edit, decision: gate.Warn, rule: gate.RuleUnplannedEdit},
		{name: "unplanned off", opts: gate.Options{UnplannedEdit: "off"}, role: "", tool: "Edit", input: edit, decision: gate.Allow},
		{name: "capability beats unplanned", role: "architect", tool: "Edit", input: edit, decision: gate.Deny, rule: gate.RuleCapability},

		// Configuration additions.
		{name: "extra capability", opts: gate.Options{ExtraCapabilities: map[string][]string{"engineer": {"no_shell_exec"}}}, role: "engineer", tool: "Bash", input: map[string]any{"command": "ls"}, tasks: true, decision: gate.Deny, capability: "no_shell_exec"},
		{name: "extra capability bash output", opts: gate.Options{ExtraCapabilities: map[string][]string{"engineer": {"no_shell_exec"}}}, role: "engineer", tool: "BashOutput", tasks: true, decision: gate.Deny, capability: "no_shell_exec"},
		{name: "extra capability keeps canonical", opts: gate.Options{ExtraCapabilities: map[string][]string{"architect": {"no_shell_exec"}}}, role: "architect", tool: "Edit", input: edit, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "extra capability for lead", opts: gate.Options{ExtraCapabilities: map[string][]string{"lead": {"no_shell_exec"}}}, role: "", tool: "Bash", input: map[string]any{"command": "ls"}, tasks: true, decision: gate.Deny, capability: "no_shell_exec"},
		{name: "extra denial", opts: gate.Options{ExtraDenials: map[string][]string{"reviewer": {"WebFetch"}}}, role: "reviewer", tool: "WebFetch", tasks: true, decision: gate.Deny, rule: gate.RuleExtraDenial, reason: []string{"gate.extra_denials.reviewer", "WebFetch"}},
		{name: "extra denial other role", opts: gate.Options{ExtraDenials: map[string][]string{"reviewer": {"WebFetch"}}}, role: "tester", tool: "WebFetch", tasks: true, decision: gate.Allow},
		{name: "extra denial everyone by nexus name", opts: gate.Options{ExtraDenials: map[string][]string{"*": {"nx_history_search"}}}, role: "", tool: "mcp__nexus__nx_history_search", tasks: true, decision: gate.Deny, rule: gate.RuleExtraDenial},
		{name: "extra denial by abstract name", opts: gate.Options{ExtraDenials: map[string][]string{"engineer": {"task_update"}}}, role: "engineer", tool: "mcp__nexus__nx_task_update", tasks: true, decision: gate.Deny, rule: gate.RuleExtraDenial},

		// Host-declared classes (neutral events).
		{name: "declared edit", role: "architect", tool: "apply_patch", declared: []string{"partial_file_edit"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "declared shell write", role: "reviewer", tool: "run", declared: []string{"shell_command_exec"}, input: map[string]any{"command": "touch x"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
		{name: "declared shell read", role: "reviewer", tool: "run", declared: []string{"shell_command_exec"}, input: map[string]any{"command": "ls"}, tasks: true, decision: gate.Allow},
		// A command that is not text cannot be shown not to write.
		{name: "reviewer bash command not a string", role: "reviewer", tool: "Bash", input: map[string]any{"command": []any{"rm", "x"}}, tasks: true, decision: gate.Deny, capability: "no_file_edit",
			reason: []string{"command is not a string"}},
		{name: "lead bash command not a string, unplanned", role: "", tool: "Bash", input: map[string]any{"command": 5.0}, decision: gate.Deny, rule: gate.RuleUnplannedEdit},
		{name: "lead bash command not a string, planned", role: "", tool: "Bash", input: map[string]any{"command": 5.0}, tasks: true, decision: gate.Allow},
		{name: "powershell opaque", role: "tester", tool: "PowerShell", input: map[string]any{"command": "Get-ChildItem"}, tasks: true, decision: gate.Deny, capability: "no_file_edit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, warnings, err := gate.New(gateOptions(core, tt.opts))
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Fatalf("warnings: %v", warnings)
			}
			cl := g.Classify(tt.tool, tt.input, tt.declared, project)
			v := g.Check(gate.Call{Role: tt.role, Classification: cl}, tt.tasks, nexusDir)
			if v.Decision != tt.decision {
				t.Fatalf("decision %s, want %s (%+v, classes %v)", v.Decision, tt.decision, v, cl.Classes)
			}
			if tt.rule != "" && v.Rule != tt.rule {
				t.Errorf("rule %s, want %s", v.Rule, tt.rule)
			}
			if tt.capability != "" && v.Capability != tt.capability {
				t.Errorf("capability %s, want %s", v.Capability, tt.capability)
			}
			for _, want := range tt.reason {
				if !strings.Contains(v.Reason, want) {
					t.Errorf("reason %q lacks %q", v.Reason, want)
				}
			}
			if v.Decision != gate.Allow && v.Reason == "" {
				t.Error("a non-allow verdict without a reason")
			}
		})
	}
}

// HostDenied must list exactly the host's tools that Check denies on every
// call for the role, so the host hides what the gate would refuse and
// nothing the gate allows.
func TestHostDeniedMatchesCheck(t *testing.T) {
	core := loadCore(t)
	g, _, err := gate.New(gateOptions(core, gate.Options{ExtraDenials: map[string][]string{"engineer": {"WebFetch", "nx_task_close"}}}))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for name := range CapabilityMap().Tools {
		all = append(all, name)
	}
	nm, _ := gate.NexusMap()
	for name := range nm.Tools {
		all = append(all, g.ToolRef(name))
	}
	roles := []string{""}
	for _, a := range core.Manifest().Agents {
		roles = append(roles, a.ID)
	}
	for _, role := range roles {
		denied := map[string]bool{}
		for _, n := range g.HostDenied(role) {
			denied[n] = true
		}
		for _, tool := range all {
			// A harmless input: a shell command that writes nothing.
			c := g.Classify(tool, map[string]any{"command": "true", "file_path": "/p/.nexus/x"}, nil, "/p")
			v := g.Check(gate.Call{Role: role, Classification: c}, true, "/p/.nexus")
			if got := v.Decision == gate.Deny; got != denied[tool] {
				t.Errorf("role %q tool %s: gate denies=%v, HostDenied lists=%v (%s)", role, tool, got, denied[tool], v.Reason)
			}
		}
	}
	arch := g.HostDenied("architect")
	for _, want := range []string{"Edit", "Write", "NotebookEdit", "PowerShell", "mcp__nexus__nx_task_add", "mcp__nexus__nx_task_update"} {
		if !slices.Contains(arch, want) {
			t.Errorf("architect: %s not hidden; got %v", want, arch)
		}
	}
	for _, never := range []string{"Bash", "Read", "mcp__nexus__nx_artifact_write"} {
		if slices.Contains(arch, never) {
			t.Errorf("architect: %s hidden, but the gate decides it per call; got %v", never, arch)
		}
	}
	if eng := g.HostDenied("engineer"); !slices.Contains(eng, "WebFetch") || !slices.Contains(eng, "mcp__nexus__nx_task_close") {
		t.Errorf("engineer: extra denials not hidden: %v", eng)
	}
}

// Plugin tools are gated by the classes their manifests declare, under the
// name Claude Code shows them by (mcp__<server>__<name>) or the bare name.
func TestPluginToolClasses(t *testing.T) {
	core := loadCore(t)
	asked := 0
	g, _, err := gate.New(gateOptions(core, gate.Options{PluginTool: func(name string) ([]string, bool) {
		asked++
		switch name {
		case "edit_apply":
			return []string{"file_modification"}, true
		case "check_decision":
			return []string{}, true
		}
		return nil, false
	}}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, role string
		decision   string
		capability string
	}{
		{"mcp__nexus__edit_apply", "architect", gate.Deny, "no_file_edit"},
		{"mcp__other__edit_apply", "architect", gate.Deny, "no_file_edit"},
		{"edit_apply", "reviewer", gate.Deny, "no_file_edit"},
		{"mcp__nexus__edit_apply", "engineer", gate.Deny, ""}, // allowed by capability; no tasks.json: unplanned edit
		{"mcp__nexus__check_decision", "architect", gate.Allow, ""},
		{"mcp__nexus__unknown_tool", "architect", gate.Allow, ""},
	}
	for _, c := range cases {
		cl := g.Classify(c.tool, map[string]any{}, nil, t.TempDir())
		v := g.Check(gate.Call{Role: c.role, Classification: cl}, false, "/p/.nexus")
		if v.Decision != c.decision || v.Capability != c.capability {
			t.Errorf("%s for %s: %+v", c.tool, c.role, v)
		}
		if v.Capability != "" && !strings.Contains(v.Reason, "nexus denied "+c.tool) {
			t.Errorf("reason %q does not name the tool", v.Reason)
		}
	}
	// With tasks.json the engineer's call is allowed.
	cl := g.Classify("mcp__nexus__edit_apply", nil, nil, "")
	if v := g.Check(gate.Call{Role: "engineer", Classification: cl}, true, "/p/.nexus"); v.Decision != gate.Allow {
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
