package codex

import (
	"fmt"

	"github.com/nexus-harness/nexus/harness/applypatch"
)

// ToolFileOps reads the file operations of a Codex tool call, for the
// gate: the apply_patch tool's patch, or apply_patch sent through the
// shell tool. patch is false for a call that applies no patch (then ops
// and err are nil). An error means the call applies a patch whose files
// cannot be named: deny it.
func ToolFileOps(tool string, input map[string]any) (ops []applypatch.FileOp, patch bool, err error) {
	switch tool {
	case ToolApplyPatch:
		text, ok := input["command"].(string)
		if !ok {
			return nil, true, fmt.Errorf("apply_patch without its patch text in tool_input.command")
		}
		ops, err := applypatch.Parse(text)
		return ops, true, err
	case ToolShell:
		cmd, ok := input["command"].(string)
		if !ok {
			if _, given := input["command"]; given {
				return nil, false, fmt.Errorf("the shell command is not a string")
			}
			return nil, false, nil
		}
		return applypatch.InShell(cmd)
	}
	return nil, false, nil
}
