package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/tags"
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

// Build derives every role and skill for a host: the gate's denials over
// the host's map, bodies in the host's spelling, descriptions with the
// role's task and the skill's trigger.
func TestBuild(t *testing.T) {
	core := loadCore(t)
	hm, err := gate.ParseMap("test", []byte("host: test\ntools:\n  put: {classes: [file_creation]}\n  run: {classes: [shell_command_exec]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &tags.Spelling{Host: "test", Macro: func(m tags.Macro, prefix string) string {
		if m.ID == "subagent_spawn" {
			return "SPAWN " + prefix + m.Params["target_role"]
		}
		return ""
	}}
	c, err := Build(Options{Core: core, ToolPrefix: "nx_", HostMap: hm, ToolRefPrefix: "srv__", Skills: sp, AgentPrefix: "p:",
		Gate: gate.Options{ExtraDenials: map[string][]string{"engineer": {"run"}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := core.Manifest()
	if len(c.Agents) != len(m.Agents) || len(c.Skills) != len(m.Skills) || c.Version != core.Version() {
		t.Fatalf("%d agents, %d skills, version %s", len(c.Agents), len(c.Skills), c.Version)
	}
	byID := map[string]Agent{}
	for _, a := range c.Agents {
		byID[a.ID] = a
		if a.Tier == "" || !strings.Contains(a.Description, "Use for: ") || strings.Contains(a.Body, "{{") {
			t.Errorf("%s: %+v", a.ID, a)
		}
	}
	if d := byID["architect"].Denied; !slices.Contains(d, "put") || !slices.Contains(d, "srv__nx_task_add") || slices.Contains(d, "run") {
		t.Errorf("architect denied %v", d)
	}
	if d := byID["engineer"].Denied; !slices.Contains(d, "run") {
		t.Errorf("engineer denied %v: the configured denial is missing", d)
	}
	found := false
	for _, s := range c.Skills {
		if s.ID == "nx-plan" {
			found = true
			if s.Trigger != "[plan]" || !strings.Contains(s.Description, "[plan]") || !strings.Contains(s.Body, "SPAWN p:researcher") {
				t.Errorf("nx-plan: trigger %q, description %q", s.Trigger, s.Description)
			}
		}
	}
	if !found || !slices.Contains(c.Triggers, "[d]") || c.ToolRef("task_add") != "srv__nx_task_add" {
		t.Errorf("skills, triggers %v or tool names wrong", c.Triggers)
	}
}
