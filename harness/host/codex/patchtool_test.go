package codex

import (
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/harness/applypatch"
)

const heredocPatch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: heredoc.txt\n+from the shell\n*** End Patch\nEOF\n"

func TestToolFileOps(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n"
	for _, c := range []struct {
		name  string
		tool  string
		input map[string]any
		want  []applypatch.FileOp
		patch bool
		err   bool
	}{
		{"apply_patch tool", ToolApplyPatch, map[string]any{"command": patch}, []applypatch.FileOp{{Kind: applypatch.OpAdd, Path: "a.txt"}}, true, false},
		{"apply_patch without text", ToolApplyPatch, map[string]any{"input": patch}, nil, true, true},
		{"apply_patch with a bad patch", ToolApplyPatch, map[string]any{"command": "nope"}, nil, true, true},
		{"heredoc through the shell", ToolShell, map[string]any{"command": heredocPatch}, []applypatch.FileOp{{Kind: applypatch.OpAdd, Path: "heredoc.txt"}}, true, false},
		{"plain shell command", ToolShell, map[string]any{"command": "ls"}, nil, false, false},
		{"shell command not a string", ToolShell, map[string]any{"command": []any{"ls"}}, nil, false, true},
		{"MCP tool", "mcp__nexus__nx_task_add", map[string]any{"command": patch}, nil, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, patch, err := ToolFileOps(c.tool, c.input)
			if (err != nil) != c.err || patch != c.patch || !reflect.DeepEqual(got, c.want) {
				t.Errorf("ToolFileOps = %+v, %v, %v", got, patch, err)
			}
		})
	}
}
