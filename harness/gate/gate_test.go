package gate

import (
	"reflect"
	"strings"
	"testing"

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

func TestConfigWarnings(t *testing.T) {
	core := loadCore(t)
	caps, w1 := RoleLists(map[string]any{"engineer": []any{"no_such_cap", "no_shell_exec"}, "writer": "no_file_edit"}, "gate.extra_capabilities")
	denials, w2 := RoleLists(map[string]any{"tester": []any{3}}, "gate.extra_denials")
	g, warnings, err := New(Options{Core: core, ExtraCapabilities: caps, ExtraDenials: denials, Warnings: append(w1, w2...)})
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
	g, _, err := New(Options{Core: core, ToolPrefix: "nx_", ToolClasses: map[string][]string{
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

// The Go table must be what the documented YAML says.
func TestGeneratedMapMatchesYAML(t *testing.T) {
	parsed, err := ParseMap("nexus.yaml", nexusYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parsed, nexusMap()) {
		t.Error("capmap_gen.go is stale: run go generate ./harness/gate")
	}
	if _, err := ParseMap("bad", []byte("host: x\ntools:\n  A: {classes: [a], shel: {}}\n")); err == nil {
		t.Error("an unknown key in a map was accepted")
	}
	if _, err := ParseMap("bad", []byte("host: x\ntools:\n  A: {classes: []}\n")); err == nil {
		t.Error("a tool without classes was accepted")
	}
}

// A host map reaches the gate through its options: its tools get their
// classes and files, and a shell tool's command is analysed.
func TestHostMapFromOptions(t *testing.T) {
	core := loadCore(t)
	hm, err := ParseMap("test", []byte("host: test\ntools:\n  put: {classes: [file_creation], file_params: [target]}\n  sh: {classes: [shell_command_exec], shell: {param: cmd, dialect: posix}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := New(Options{Core: core, HostMap: hm, ToolPrefix: "nx_"})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Classify("put", map[string]any{"target": "a.txt"}, nil, "/p")
	if !c.Writes || len(c.Files) != 1 || c.Files[0] != "/p/a.txt" {
		t.Errorf("put: %+v", c)
	}
	if v := g.Check(Call{Role: "architect", Classification: c}, true, "/p/.nexus"); v.Decision != Deny || v.Capability != "no_file_edit" {
		t.Errorf("architect put: %+v", v)
	}
	c = g.Classify("sh", map[string]any{"cmd": "echo x > b.txt"}, nil, "/p")
	if !c.Writes || len(c.Files) != 1 || c.Files[0] != "/p/b.txt" {
		t.Errorf("sh: %+v", c)
	}
	if c := g.Classify("Edit", map[string]any{"file_path": "x"}, nil, "/p"); len(c.Classes) != 0 {
		t.Errorf("a tool outside the map has classes %v", c.Classes)
	}
}

// A host's analyzer adds what one call does to its tool's classes: the
// files it names are judged like any edit's, and a call it cannot read
// fails closed. A host's own MCP naming finds nexus's tools.
func TestAnalyzerAndMCPName(t *testing.T) {
	core := loadCore(t)
	hm, err := ParseMap("test", []byte("host: test\ntools:\n  patch: {classes: [code_patch]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	patch := func(input map[string]any) Effect {
		text, _ := input["patch"].(string)
		if text == "" {
			return Effect{Unknown: true, Why: []string{"the patch could not be read"}}
		}
		return Effect{Classes: []string{"file_creation"}, Files: []string{text}}
	}
	g, _, err := New(Options{Core: core, HostMap: hm, ToolPrefix: "nx_", ToolRefPrefix: "nexus_", Analyzers: map[string]Analyzer{"patch": patch},
		MCPName: func(tool string) string { name, _ := strings.CutPrefix(tool, "nexus_"); return name }})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Classify("patch", map[string]any{"patch": "src/a.go"}, nil, "/p")
	if !c.Writes || c.WritesUnknown || len(c.Files) != 1 || c.Files[0] != "/p/src/a.go" {
		t.Errorf("patch: %+v", c)
	}
	if v := g.Check(Call{Role: "architect", Classification: c}, true, "/p/.nexus"); v.Decision != Deny || v.Capability != "no_file_edit" {
		t.Errorf("architect's patch: %+v", v)
	}
	c = g.Classify("patch", map[string]any{}, nil, "/p")
	if !c.Writes || !c.WritesUnknown {
		t.Errorf("an unreadable patch must count as writing an unknown file: %+v", c)
	}
	if v := g.Check(Call{Role: "", Classification: c}, false, "/p/.nexus"); v.Decision != Deny || v.Rule != RuleUnplannedEdit {
		t.Errorf("Lead's unreadable patch, unplanned: %+v", v)
	}
	if n, ok := g.NexusName("nexus_nx_task_add"); !ok || n != "task_add" {
		t.Errorf("NexusName by the host's naming = %q %v", n, ok)
	}
	if g.ToolRef("task_add") != "nexus_nx_task_add" {
		t.Errorf("ToolRef = %q", g.ToolRef("task_add"))
	}
}
