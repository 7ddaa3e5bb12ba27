package opencode

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// TestGate: the gate with OpenCode's profile decides calls as OpenCode
// sends them (its tool names, its argument shapes, nexus's MCP tools as
// nexus_<tool>).
func TestGate(t *testing.T) {
	core := loadCore(t)
	p := Profile()
	g, _, err := gate.New(gate.Options{Core: core, HostMap: p.Map, MCPName: p.MCPName, Analyzers: p.Analyzers, ToolPrefix: "nx_", ToolRefPrefix: p.ToolPrefix})
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	nexusDir := filepath.Join(project, ".nexus")
	patch := map[string]any{"patchText": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"}
	memPatch := map[string]any{"patchText": "*** Begin Patch\n*** Add File: .nexus/memory/m.md\n+x\n*** Delete File: .nexus/memory/old.md\n*** End Patch"}
	mixedPatch := map[string]any{"patchText": "*** Begin Patch\n*** Add File: .nexus/memory/m.md\n+x\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-a\n+b\n*** End Patch"}
	cases := []struct {
		role, tool string
		input      map[string]any
		tasks      bool
		decision   string
		reason     []string
	}{
		{"architect", ToolWrite, map[string]any{"filePath": "notes.txt", "content": "x"}, true, gate.Deny, []string{"nexus denied write", "no_file_edit", "nexus_nx_artifact_write"}},
		{"architect", ToolEdit, map[string]any{"filePath": "notes.txt", "oldString": "a", "newString": "b"}, true, gate.Deny, []string{"no_file_edit"}},
		{"architect", ToolApplyPatch, patch, true, gate.Deny, []string{"no_file_edit"}},
		{"architect", ToolBash, map[string]any{"command": "echo x > notes.txt", "description": "d"}, true, gate.Deny, []string{"output redirection to notes.txt"}},
		{"architect", ToolBash, map[string]any{"command": "cat .nexus/memory/lesson.md"}, true, gate.Allow, nil},
		{"architect", ToolRead, map[string]any{"filePath": "notes.txt"}, true, gate.Allow, nil},
		{"architect", "nexus_nx_task_add", map[string]any{"title": "x"}, true, gate.Deny, []string{"nexus denied nexus_nx_task_add", "no_task_create"}},
		{"architect", "nexus_nx_task_close", nil, true, gate.Deny, []string{"no_task_update"}},
		{"architect", "nexus_nx_artifact_write", map[string]any{"filename": "a.md", "content": "x"}, false, gate.Allow, nil},
		{"architect", "nexus_nx_task_list", nil, true, gate.Allow, nil},
		{"engineer", "nexus_nx_task_update", nil, true, gate.Allow, nil},
		{"engineer", ToolWrite, map[string]any{"filePath": "a.go"}, true, gate.Allow, nil},
		{"architect", "github_create_issue", nil, true, gate.Allow, nil},
		{"", ToolTask, map[string]any{"subagent_type": "architect"}, false, gate.Allow, nil},
		{"", ToolWrite, map[string]any{"filePath": "a.go"}, false, gate.Deny, []string{"a.go", "planned task cycle"}},
		{"", ToolWrite, map[string]any{"filePath": ".nexus/memory/m.md"}, false, gate.Allow, nil},
		// A patch's files are named and judged each: unplanned, a patch of
		// the project's files is refused, one of .nexus/ alone is not.
		{"", ToolApplyPatch, patch, false, gate.Deny, []string{"a.txt", "planned task cycle"}},
		{"", ToolApplyPatch, patch, true, gate.Allow, nil},
		{"", ToolApplyPatch, memPatch, false, gate.Allow, nil},
		{"", ToolApplyPatch, mixedPatch, false, gate.Deny, []string{"src/b.go", "planned task cycle"}},
		// A patch nexus cannot read writes files it cannot name.
		{"", ToolApplyPatch, map[string]any{"patchText": "*** Begin Patch\n*** Frobnicate: x\n*** End Patch"}, true, gate.Allow, nil},
		{"", ToolApplyPatch, map[string]any{"patchText": "*** Begin Patch\n*** Frobnicate: x\n*** End Patch"}, false, gate.Deny, []string{"planned task cycle"}},
		{"", ToolApplyPatch, map[string]any{"patchText": 7}, false, gate.Deny, []string{"planned task cycle"}},
		{"architect", ToolApplyPatch, memPatch, true, gate.Deny, []string{"no_file_edit"}},
	}
	for _, c := range cases {
		cl := g.Classify(c.tool, c.input, nil, project)
		v := g.Check(gate.Call{Role: c.role, Classification: cl}, c.tasks, nexusDir)
		if v.Decision != c.decision {
			t.Errorf("%s %s %v: %s (%s), want %s", c.role, c.tool, c.input, v.Decision, v.Reason, c.decision)
			continue
		}
		for _, r := range c.reason {
			if !strings.Contains(v.Reason, r) {
				t.Errorf("%s %s: the reason %q lacks %q", c.role, c.tool, v.Reason, r)
			}
		}
	}
	// A read of a memory file is a read of that file (memory observation).
	cl := g.Classify(ToolRead, map[string]any{"filePath": ".nexus/memory/lesson.md"}, nil, project)
	if !cl.Reads() || len(cl.Files) != 1 || cl.Files[0] != filepath.Join(nexusDir, "memory", "lesson.md") {
		t.Errorf("read classified %+v", cl)
	}
}

func loadCore(t *testing.T) *vocabulary.Core {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return core
}
