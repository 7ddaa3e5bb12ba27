package opencode

import "github.com/nexus-harness/nexus/harness/lifecycle"

// Profile describes OpenCode to the lifecycle engine (and through it to
// the gate): OpenCode's capability map and MCP tool names, the task tool
// that spawns subagents, and how Lead reads nexus's tools and roles.
//
// No Lead reminders: a subagent's completion is decoded from the task
// tool's result itself, and Encode adds the completion's note to that
// result. No text budget: OpenCode hands a synthetic part to the model
// whole (no limit was found in 1.18.33).
//
// TODO(issue 24 integration): the skill tool (skill, input {"name"})
// once the engine can read a skill tool's argument by another name than
// "skill"; a skill spelling for OpenCode (tags.Spelling; the neutral one
// until then); the apply_patch analyzer (gate.Analyzer) from the patch
// parser of harness/host/codex, moved where both hosts can use it.
func Profile() lifecycle.HostProfile {
	return lifecycle.HostProfile{
		Name:       Name,
		Map:        CapabilityMap(),
		MCPName:    MCPName,
		SpawnTools: SpawnTools,
		SpawnRoles: "with the task tool, subagent_type = the role id",
		ToolPrefix: MCPToolPrefix,
		ToolNames:  true,
	}
}
