package opencode

import (
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/applypatch"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/tags"
)

// Host is OpenCode. Its hooks come from the plugin nexus writes, as a
// stream of requests (host.Server): Codec is nil.
type Host struct{}

// Name implements host.Host.
func (Host) Name() string { return Name }

// HarnessID implements host.Host: OpenCode's state lives under
// .nexus/state/opencode/, beside Claude Code's .nexus/state/nexus/, so both
// can work in one project at once.
func (Host) HarnessID() string { return Name }

// Codec implements host.Host: none; ServeHooks reads OpenCode's hooks.
func (Host) Codec() host.Codec { return nil }

// ProjectDir implements host.Host: OpenCode names no project to its
// plugins' children; the folder OpenCode runs in decides (the request's
// dir).
func (Host) ProjectDir(func(string) string) string { return "" }

// Profile implements host.Host.
func (Host) Profile(host.Env) lifecycle.HostProfile { return Profile() }

// Profile describes OpenCode to the lifecycle engine (and through it to
// the gate): OpenCode's capability map, the apply_patch analyzer and its
// MCP tool names; the task tool that spawns subagents and the skill tool
// that loads a skill by name; how skill bodies and Lead's first context
// read in OpenCode.
//
// No Lead reminders: a subagent's completion is decoded from the task
// tool's result itself, and Encode adds the completion's note to that
// result. No text budget: OpenCode hands a synthetic part to the model
// whole (no limit was found in 1.18.33), so a skill is always injected and
// never needs loading by the model.
func Profile() lifecycle.HostProfile {
	return lifecycle.HostProfile{
		Name:        Name,
		Map:         CapabilityMap(),
		Analyzers:   map[string]gate.Analyzer{ToolApplyPatch: applypatch.ToolAnalyzer("patchText")},
		MCPName:     MCPName,
		Skills:      Spelling,
		InstallHint: "run `nexus install opencode` in the project",
		SpawnTools:  SpawnTools,
		SpawnRoles:  "with the task tool, subagent_type = the role id",
		ToolPrefix:  MCPToolPrefix,
		ToolNames:   true,
		SkillTool:   ToolSkill,
		SkillArg:    "name",
	}
}

// Spelling is how skill bodies' primitives read in OpenCode: subagents
// are spawned with the task tool (subagent_type, description, prompt) and
// resumed with its task_id, progress is kept with todowrite, questions go
// through the question tool, and installed skills are loaded with the
// skill tool.
var Spelling = &tags.Spelling{
	Host:  Name,
	Macro: spell,
	Docs: map[string]string{
		"resume_invocation":     "Resuming a subagent in OpenCode: the task tool's result names the subagent's session as task_id (<task id=\"ses_…\">), which nexus also records as the agent_id in .nexus/state/opencode/agent-tracker.json; calling the task tool again with that task_id (and the same subagent_type) continues the same subagent session with its earlier messages. When resuming is not possible, spawn a fresh subagent without comment (nexus-core's resume gating). A bounded-tier agent resumed for the same artifact must be told to re-read its target files first.",
		"instruction_file":      "OpenCode's project instruction file is AGENTS.md at the project root (OpenCode reads CLAUDE.md when there is no AGENTS.md).",
		"slash_command_display": "In OpenCode, skills are typed as bracket tags ([plan], [run], [sync]); once `nexus install opencode` has installed them OpenCode also lists them to the model, which loads one with the skill tool (name nx-plan, nx-run, nx-sync, nx-init; nx-init has no tag), and offers them as commands (/nx-plan …).",
	},
	Note: func(toolPrefix string) string {
		return fmt.Sprintf("Tools named %s* in these instructions are nexus's MCP tools; OpenCode lists them as %s%s* (%s%splan_start with the server `nexus install opencode` registers).", toolPrefix, MCPToolPrefix, toolPrefix, MCPToolPrefix, toolPrefix)
	},
}

func spell(m tags.Macro, agentPrefix string) string {
	switch m.ID {
	case "subagent_spawn":
		// OpenCode's built-in code explorer is its "explore" agent, so the
		// role id stays as it is.
		s := fmt.Sprintf("the task tool (subagent_type %q", agentPrefix+m.Params["target_role"])
		if n := m.Params["name"]; n != "" {
			s += fmt.Sprintf(", description %q", n)
		}
		if h := m.Params["resume_tier_hint"]; h != "" {
			s += ", resume tier " + h
		}
		prompt := m.Params["prompt"]
		if strings.Contains(prompt, "\n") {
			return s + ") with this prompt:\n" + prompt
		}
		return s + fmt.Sprintf(", prompt %q)", prompt)
	case "task_register":
		return fmt.Sprintf("todowrite item %q → %s", m.Params["label"], m.Params["state"])
	case "user_question":
		return fmt.Sprintf("the question tool (question %q, options %s)", m.Params["question"], m.Params["options"])
	}
	return ""
}
