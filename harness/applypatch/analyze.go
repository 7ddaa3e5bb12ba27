package applypatch

import "github.com/nexus-harness/nexus/harness/gate"

// ToolAnalyzer is the gate's analyzer of a patch tool whose argument param
// holds the patch text (OpenCode's apply_patch: patchText): the call
// touches every path its operations add, change, move or delete, each of
// which the gate judges (a role's edit capabilities, the unplanned-edit
// rule and its exemption of .nexus/). A patch it cannot read, or an
// argument that is not text, comes back as writing files it cannot name,
// so the gate fails closed. The call's classes are the tool's own, from the
// host's map.
func ToolAnalyzer(param string) gate.Analyzer {
	return func(input map[string]any) gate.Effect {
		text, ok := input[param].(string)
		if !ok {
			return unnamed(param + " is not text, so the files the patch changes cannot be named")
		}
		ops, err := Parse(text)
		if err != nil {
			return unnamed("the patch could not be read (" + err.Error() + "), so the files it changes cannot be named")
		}
		var e gate.Effect
		seen := map[string]bool{}
		for _, op := range ops {
			for _, ef := range op.Effects() {
				if !seen[ef.Path] {
					seen[ef.Path] = true
					e.Files = append(e.Files, ef.Path)
				}
			}
		}
		if len(e.Files) > 0 {
			e.Why = []string{"a patch"}
		}
		return e
	}
}

// unnamed is the effect of a call whose files cannot be named.
func unnamed(why string) gate.Effect {
	return gate.Effect{Classes: []string{"file_modification"}, Unknown: true, Why: []string{why}}
}
