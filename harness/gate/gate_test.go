package gate

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

func loadCore(t *testing.T) *vocabulary.Core {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// configWith loads a configuration whose project file has the given YAML.
func configWith(t *testing.T, yaml string) *config.Config {
	t.Helper()
	return testenv.ProjectConfig(t, t.TempDir(), yaml)
}

// Every class a nexus-core capability blocks must reach at least one
// concrete tool, or that capability would silently block nothing.
func TestEveryBlockedClassMapsToATool(t *testing.T) {
	core := loadCore(t)
	cov, err := Coverage(HostClaude, nil, "nx_")
	if err != nil {
		t.Fatal(err)
	}
	caps := core.Manifest().Vocabulary.Capabilities
	if len(caps) == 0 {
		t.Fatal("the distribution declares no capabilities")
	}
	for _, cp := range caps {
		if len(cp.BlocksSemanticClasses) == 0 {
			t.Errorf("capability %s blocks no class", cp.ID)
		}
		for _, class := range cp.BlocksSemanticClasses {
			if len(cov[class]) == 0 {
				t.Errorf("capability %s blocks class %q, which no tool in claude.yaml or nexus.yaml carries", cp.ID, class)
			}
		}
	}
	// no_task_update must cover closing, per the capability's prose.
	found := false
	for _, tool := range cov["nexus_task_state_transition"] {
		found = found || tool == "nx_task_close"
	}
	if !found {
		t.Errorf("nx_task_close does not carry nexus_task_state_transition: %v", cov["nexus_task_state_transition"])
	}
}

// The Go tables must be what the documented YAML says.
func TestGeneratedMapsMatchYAML(t *testing.T) {
	for name, data := range map[string][]byte{"claude.yaml": claudeYAML, "nexus.yaml": nexusYAML} {
		parsed, err := parseMap(name, data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(parsed, generatedMaps[name]) {
			t.Errorf("capmap_gen.go is stale for %s: run go generate ./harness/gate", name)
		}
	}
}

func TestShippedMapsParse(t *testing.T) {
	for _, host := range []string{HostClaude, HostNeutral} {
		if _, err := HostMap(host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if _, err := NexusMap(); err != nil {
		t.Error(err)
	}
	if _, err := HostMap("vscode"); err == nil {
		t.Error("an unknown host has a map")
	}
	if _, err := parseMap("bad", []byte("host: x\ntools:\n  A: {classes: [a], shel: {}}\n")); err == nil {
		t.Error("an unknown key in a map was accepted")
	}
}

func TestCheck(t *testing.T) {
	core := loadCore(t)
	project := t.TempDir()
	nexusDir := filepath.Join(project, ".nexus")
	type tc struct {
		name       string
		config     string
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
		{name: "architect edit", role: "architect", tool: "Edit", input: edit, tasks: true, decision: Deny, rule: RuleCapability, capability: "no_file_edit",
			reason: []string{"Edit", "the architect agent", "no_file_edit", "workspace_write_denial", "partial_file_edit"}},
		{name: "architect write", role: "architect", tool: "Write", input: map[string]any{"file_path": "/x"}, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "architect notebook", role: "architect", tool: "NotebookEdit", input: map[string]any{"notebook_path": "/n.ipynb"}, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "architect read", role: "architect", tool: "Read", input: map[string]any{"file_path": "/x"}, tasks: true, decision: Allow},
		{name: "architect grep", role: "architect", tool: "Grep", tasks: true, decision: Allow},
		{name: "architect bash read", role: "architect", tool: "Bash", input: map[string]any{"command": "git log --oneline | head"}, tasks: true, decision: Allow},
		{name: "architect bash write", role: "architect", tool: "Bash", input: map[string]any{"command": "echo x > notes.txt"}, tasks: true, decision: Deny, capability: "no_file_edit",
			reason: []string{"Bash", "output redirection to notes.txt"}},
		{name: "tester sed -i", role: "tester", tool: "Bash", input: map[string]any{"command": "sed -i 's/a/b/' x.go"}, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "architect task close", role: "architect", tool: "mcp__nexus__nx_task_close", tasks: true, decision: Deny, capability: "no_task_update",
			reason: []string{"nexus_task_state_transition", "Lead"}},
		{name: "architect task update", role: "architect", tool: "mcp__nexus__nx_task_update", tasks: true, decision: Deny, capability: "no_task_update"},
		{name: "engineer task add", role: "engineer", tool: "mcp__nexus__nx_task_add", tasks: true, decision: Deny, capability: "no_task_create"},
		{name: "engineer task add, bare prefix", role: "engineer", tool: "nx_task_add", tasks: true, decision: Deny, capability: "no_task_create"},
		{name: "engineer task update", role: "engineer", tool: "mcp__nexus__nx_task_update", tasks: true, decision: Allow},
		{name: "engineer edit", role: "engineer", tool: "Edit", input: edit, tasks: true, decision: Allow},
		{name: "researcher artifact", role: "researcher", tool: "mcp__nexus__nx_artifact_write", input: map[string]any{"filename": "f.md", "content": "x"}, decision: Allow},
		{name: "reviewer task list", role: "reviewer", tool: "mcp__nexus__nx_task_list", tasks: true, decision: Allow},
		{name: "foreign mcp tool", role: "architect", tool: "mcp__other__write_file", tasks: true, decision: Allow},
		{name: "non-manifest role", role: "general-purpose", tool: "Edit", input: edit, tasks: true, decision: Allow},
		{name: "lead edit planned", role: "", tool: "Edit", input: edit, tasks: true, decision: Allow},
		{name: "lead task add", role: "", tool: "mcp__nexus__nx_task_add", decision: Allow},

		// Unplanned edits.
		{name: "lead edit unplanned", role: "", tool: "Edit", input: edit, decision: Deny, rule: RuleUnplannedEdit,
			reason: []string{"src/a.go", "planned task cycle", "tasks.json", "gate.unplanned_edit"}},
		{name: "engineer edit unplanned", role: "engineer", tool: "Edit", input: edit, decision: Deny, rule: RuleUnplannedEdit},
		{name: "lead memory write unplanned", role: "", tool: "Write", input: map[string]any{"file_path": filepath.Join(nexusDir, "memory", "m.md")}, decision: Allow},
		{name: "lead relative rules write unplanned", role: "", tool: "Bash", input: map[string]any{"command": "cat > .nexus/rules/r.md <<'EOF'\nx\nEOF"}, decision: Allow},
		{name: "lead glob rm unplanned", role: "", tool: "Bash", input: map[string]any{"command": "rm .nexus/memory/*.md"}, decision: Deny, rule: RuleUnplannedEdit},
		{name: "lead escape unplanned", role: "", tool: "Write", input: map[string]any{"file_path": filepath.Join(nexusDir, "..", "x")}, decision: Deny, rule: RuleUnplannedEdit},
		{name: "lead read unplanned", role: "", tool: "Read", input: map[string]any{"file_path": "/x"}, decision: Allow},
		{name: "unplanned warn", config: "gate:\n  unplanned_edit: warn\n", role: "", tool: "Edit", input: edit, decision: Warn, rule: RuleUnplannedEdit},
		{name: "unplanned off", config: "gate:\n  unplanned_edit: off\n", role: "", tool: "Edit", input: edit, decision: Allow},
		{name: "capability beats unplanned", role: "architect", tool: "Edit", input: edit, decision: Deny, rule: RuleCapability},

		// Configuration additions.
		{name: "extra capability", config: "gate:\n  extra_capabilities:\n    engineer: [no_shell_exec]\n", role: "engineer", tool: "Bash", input: map[string]any{"command": "ls"}, tasks: true, decision: Deny, capability: "no_shell_exec"},
		{name: "extra capability bash output", config: "gate:\n  extra_capabilities:\n    engineer: [no_shell_exec]\n", role: "engineer", tool: "BashOutput", tasks: true, decision: Deny, capability: "no_shell_exec"},
		{name: "extra capability keeps canonical", config: "gate:\n  extra_capabilities:\n    architect: [no_shell_exec]\n", role: "architect", tool: "Edit", input: edit, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "extra capability for lead", config: "gate:\n  extra_capabilities:\n    lead: [no_shell_exec]\n", role: "", tool: "Bash", input: map[string]any{"command": "ls"}, tasks: true, decision: Deny, capability: "no_shell_exec"},
		{name: "extra denial", config: "gate:\n  extra_denials:\n    reviewer: [WebFetch]\n", role: "reviewer", tool: "WebFetch", tasks: true, decision: Deny, rule: RuleExtraDenial, reason: []string{"gate.extra_denials.reviewer", "WebFetch"}},
		{name: "extra denial other role", config: "gate:\n  extra_denials:\n    reviewer: [WebFetch]\n", role: "tester", tool: "WebFetch", tasks: true, decision: Allow},
		{name: "extra denial everyone by nexus name", config: "gate:\n  extra_denials:\n    \"*\": [nx_history_search]\n", role: "", tool: "mcp__nexus__nx_history_search", tasks: true, decision: Deny, rule: RuleExtraDenial},
		{name: "extra denial by abstract name", config: "gate:\n  extra_denials:\n    engineer: [task_update]\n", role: "engineer", tool: "mcp__nexus__nx_task_update", tasks: true, decision: Deny, rule: RuleExtraDenial},

		// Host-declared classes (neutral events).
		{name: "declared edit", role: "architect", tool: "apply_patch", declared: []string{"partial_file_edit"}, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "declared shell write", role: "reviewer", tool: "run", declared: []string{"shell_command_exec"}, input: map[string]any{"command": "touch x"}, tasks: true, decision: Deny, capability: "no_file_edit"},
		{name: "declared shell read", role: "reviewer", tool: "run", declared: []string{"shell_command_exec"}, input: map[string]any{"command": "ls"}, tasks: true, decision: Allow},
		// A command that is not text cannot be shown not to write.
		{name: "reviewer bash command not a string", role: "reviewer", tool: "Bash", input: map[string]any{"command": []any{"rm", "x"}}, tasks: true, decision: Deny, capability: "no_file_edit",
			reason: []string{"command is not a string"}},
		{name: "lead bash command not a string, unplanned", role: "", tool: "Bash", input: map[string]any{"command": 5.0}, decision: Deny, rule: RuleUnplannedEdit},
		{name: "lead bash command not a string, planned", role: "", tool: "Bash", input: map[string]any{"command": 5.0}, tasks: true, decision: Allow},
		{name: "powershell opaque", role: "tester", tool: "PowerShell", input: map[string]any{"command": "Get-ChildItem"}, tasks: true, decision: Deny, capability: "no_file_edit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, warnings, err := New(Options{Core: core, Host: HostClaude, Config: configWith(t, tt.config)})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Fatalf("warnings: %v", warnings)
			}
			cl := g.Classify(tt.tool, tt.input, tt.declared, project)
			v := g.Check(Call{Role: tt.role, Classification: cl}, tt.tasks, nexusDir)
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
			if v.Decision != Allow && v.Reason == "" {
				t.Error("a non-allow verdict without a reason")
			}
		})
	}
}

func TestConfigWarnings(t *testing.T) {
	core := loadCore(t)
	cfg := configWith(t, "gate:\n  extra_capabilities:\n    engineer: [no_such_cap, no_shell_exec]\n    writer: no_file_edit\n  extra_denials:\n    tester: [3]\n")
	g, warnings, err := New(Options{Core: core, Host: HostClaude, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"no_such_cap", "extra_capabilities.writer", "extra_denials.tester"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %q", joined, want)
		}
	}
	if got := g.Capabilities("engineer"); strings.Join(got, ",") != "no_shell_exec,no_task_create" {
		t.Errorf("engineer capabilities %v", got)
	}
	if got := g.Capabilities("writer"); strings.Join(got, ",") != "no_task_create" {
		t.Errorf("a malformed addition changed the canonical set: %v", got)
	}
	if got := g.Capabilities(""); len(got) != 0 {
		t.Errorf("Lead has capabilities %v", got)
	}
}

func TestToolClassesJoinTheMap(t *testing.T) {
	core := loadCore(t)
	g, _, err := New(Options{Core: core, Host: HostNeutral, ToolClasses: map[string][]string{
		"memory_save": {"memory_write"},
		"task_close":  {"nexus_task_metadata_modification"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cl := g.Classify("nx_task_close", nil, nil, "")
	if strings.Join(cl.Classes, ",") != "nexus_task_metadata_modification,nexus_task_state_transition" {
		t.Errorf("task_close classes %v", cl.Classes)
	}
	if n, ok := g.NexusName("mcp__srv__nx_memory_save"); !ok || n != "memory_save" {
		t.Errorf("NexusName = %q %v", n, ok)
	}
	if _, ok := g.NexusName("nx_unknown"); ok {
		t.Error("an unknown nx_ tool resolved")
	}
}

// HostDenied must list exactly the host's tools that Check denies on every
// call for the role, so the host hides what the gate would refuse and
// nothing the gate allows.
func TestHostDeniedMatchesCheck(t *testing.T) {
	core := loadCore(t)
	cfg := configWith(t, "gate:\n  extra_denials:\n    engineer: [WebFetch, nx_task_close]\n")
	g, _, err := New(Options{Core: core, Host: HostClaude, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	hm, _ := HostMap(HostClaude)
	var all []string
	for name := range hm.Tools {
		all = append(all, name)
	}
	for name := range g.nexus {
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
			v := g.Check(Call{Role: role, Classification: c}, true, "/p/.nexus")
			if got := v.Decision == Deny; got != denied[tool] {
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
