package setup

import (
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host/opencode"
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

// openCodeCatalog is the vendored distribution's catalog as OpenCode sees
// it: what install renders from.
func openCodeCatalog(t *testing.T, core *vocabulary.Core) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Build(catalog.Options{Core: core, ToolPrefix: "nx_"}.WithHost(opencode.Profile()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAgentRoundTrip renders every role of the vendored distribution with
// the permissions its capabilities give, and reads each file back: the
// body survives byte for byte, and the denials are the expected ones.
func TestAgentRoundTrip(t *testing.T) {
	core := loadCore(t)
	c := openCodeCatalog(t, core)
	if n := len(c.Agents); n != 9 {
		t.Errorf("%d roles in the distribution, want the nine", n)
	}
	for _, a := range c.Agents {
		deny := Permissions(a.Denied)
		in := Agent{ID: a.ID, Description: a.Description, Body: a.Body, Model: "anthropic/claude-opus-4", Deny: deny}
		b, err := AgentMD(in)
		if err != nil {
			t.Fatalf("%s: %v", a.ID, err)
		}
		back, err := ParseAgentMD(a.ID, b)
		if err != nil {
			t.Fatalf("%s: %v", a.ID, err)
		}
		if back.Body != strings.TrimRight(a.Body, "\n")+"\n" || back.Description != a.Description || back.Model != in.Model || !slices.Equal(back.Deny, deny) {
			t.Errorf("%s does not read back: %+v", a.ID, back)
		}
		edits := slices.Contains(a.Capabilities, "no_file_edit")
		if slices.Contains(deny, "edit") != edits {
			t.Errorf("%s (%v): permission %v", a.ID, a.Capabilities, deny)
		}
		if slices.Contains(deny, "bash") {
			t.Errorf("%s: bash denied; no role of nexus-core 0.10 blocks the shell", a.ID)
		}
		if slices.Contains(a.Capabilities, "no_task_create") != slices.Contains(deny, "nexus_nx_task_add") {
			t.Errorf("%s (%v): permission %v", a.ID, a.Capabilities, deny)
		}
	}
}

// TestPermissions: which permission keys hide what the gate denies.
func TestPermissions(t *testing.T) {
	for _, tt := range []struct {
		denied, want []string
	}{
		{[]string{"write", "edit", "apply_patch"}, []string{"edit"}},
		// "edit" hides all three (OpenCode asks no other key of them): a
		// role that may use one keeps them, and the gate refuses the rest.
		{[]string{"write", "apply_patch"}, nil},
		{[]string{"bash", "task", "nexus_nx_task_add", "nauro_propose_decision"}, []string{"bash", "nauro_propose_decision", "nexus_nx_task_add", "task"}},
		{[]string{"read_mcp_resource", "list_mcp_resources"}, nil},
		{nil, nil},
	} {
		if got := Permissions(tt.denied); !slices.Equal(got, tt.want) {
			t.Errorf("Permissions(%v) = %v, want %v", tt.denied, got, tt.want)
		}
	}
}

func TestAgentGolden(t *testing.T) {
	core := loadCore(t)
	body, err := core.ReadAgentBody("architect")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := core.Agent("architect")
	var denied []string
	for _, ca := range openCodeCatalog(t, core).Agents {
		if ca.ID == "architect" {
			denied = ca.Denied
		}
	}
	b, err := AgentMD(Agent{ID: "architect", Description: a.Description, Body: body, Model: "anthropic/claude-opus-4", Deny: Permissions(denied)})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agents/architect.md", b)
	b, err = AgentMD(Agent{ID: "writer", Description: "Writes: \"quotes\", colons #and hashes\nover two lines", Body: "Body.\n\n\n"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agents/writer.md", b)
}

func TestSkillRoundTrip(t *testing.T) {
	core := loadCore(t)
	for _, s := range core.Manifest().Skills {
		body, err := core.ReadSkillBody(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := SkillMD(Skill{ID: s.ID, Description: s.Description, Body: body})
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		back, err := ParseSkillMD(b)
		if err != nil || back.ID != s.ID || back.Body != strings.TrimRight(body, "\n")+"\n" || back.Description != strings.Join(strings.Fields(s.Description), " ") {
			t.Errorf("%s does not read back (%v)", s.ID, err)
		}
		if s.ID == "nx-plan" {
			golden(t, "skills/nx-plan.SKILL.md", b)
		}
	}
}

func TestAgentRefuses(t *testing.T) {
	for _, a := range []Agent{
		{ID: "Architect", Description: "d"},
		{ID: "../x", Description: "d"},
		{ID: "a", Description: " "},
		{ID: "a", Description: "d", Model: "opus"},
		{ID: "a", Description: "d", Deny: []string{"edit", "edit"}},
		{ID: "a", Description: "d\xff"},
	} {
		if _, err := AgentMD(a); err == nil {
			t.Errorf("AgentMD(%+v) rendered", a)
		}
	}
	for _, s := range []Skill{{ID: "x", Description: ""}, {ID: "x", Description: strings.Repeat("d", MaxSkillDescription+1)}, {ID: "X", Description: "d"}} {
		if _, err := SkillMD(s); err == nil {
			t.Errorf("SkillMD(%+v) rendered", s)
		}
	}
	for _, f := range []string{"no front matter", "---\ndescription: x\nmode: subagent\n", "---\ndescription: x\nmode: primary\n---\n\nb\n", "---\ndescription: x\nmode: subagent\ntools: {}\n---\n\nb\n", "---\ndescription: x\nmode: subagent\npermission: {edit: allow}\n---\n\nb\n"} {
		if _, err := ParseAgentMD("a", []byte(f)); err == nil {
			t.Errorf("ParseAgentMD(%q) read it", f)
		}
	}
}

// TestCapabilityMap: every class a nexus-core capability blocks is carried
// by a tool of OpenCode's map or of nexus's own, so no capability is left
// without a tool to deny; entries are well formed.
func TestCapabilityMap(t *testing.T) {
	core := loadCore(t)
	nm, _ := gate.NexusMap()
	reached := map[string]bool{}
	for name, e := range opencode.CapabilityMap().Tools {
		if len(e.Classes) == 0 {
			t.Errorf("%s has no classes", name)
		}
		if e.Shell != nil && e.Shell.Dialect != gate.DialectPOSIX && e.Shell.Dialect != gate.DialectOpaque {
			t.Errorf("%s: shell dialect %q", name, e.Shell.Dialect)
		}
		for _, c := range e.Classes {
			reached[c] = true
		}
	}
	for _, e := range nm.Tools {
		for _, c := range e.Classes {
			reached[c] = true
		}
	}
	for _, id := range []string{"no_file_edit", "no_task_create", "no_task_update", "no_shell_exec"} {
		c, ok := core.Capability(id)
		if !ok {
			t.Fatalf("no capability %s", id)
		}
		for _, cl := range c.BlocksSemanticClasses {
			if !reached[cl] && cl != "interactive_shell_session" {
				t.Errorf("class %s of %s is carried by no OpenCode or nexus tool", cl, id)
			}
		}
	}
	for _, tool := range opencode.EditTools {
		if !slices.Contains(opencode.CapabilityMap().Tools[tool].Classes, "file_modification") {
			t.Errorf("%s is not a file edit", tool)
		}
	}
}
