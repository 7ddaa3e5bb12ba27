package claude

import (
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/tags"
)

// Spelling is how skill bodies' primitives read in Claude Code: subagents
// are spawned with the Agent tool, progress is kept with TodoWrite,
// questions go through AskUserQuestion.
var Spelling = &tags.Spelling{
	Host:  Name,
	Macro: spell,
	Docs: map[string]string{
		"resume_invocation":     "Resuming a subagent in Claude Code: where your Claude Code version can resume a finished subagent by its agent id (the Agent tool's resume parameter, or SendMessage when agent teams are on), use the agent_id that nexus records in .nexus/state/<harness-id>/agent-tracker.json. When resuming is not possible, spawn a fresh subagent without comment (nexus-core's resume gating). A bounded-tier agent resumed for the same artifact must be told to re-read its target files first.",
		"instruction_file":      "Claude Code's project instruction file is CLAUDE.md at the project root.",
		"slash_command_display": "In Claude Code, skills are typed as bracket tags ([plan], [run], [sync]); once `nexus install claude` has installed them they are also slash commands (/nx-plan, /nx-run, /nx-sync, /nx-init; nx-init has no tag).",
	},
	Note: func(toolPrefix string) string {
		return fmt.Sprintf("Tools named %s* in these instructions are nexus's MCP tools; Claude Code lists them as mcp__<server>__%s* (mcp__nexus__%splan_start with the server `nexus install claude` registers).", toolPrefix, toolPrefix, toolPrefix)
	},
}

func spell(m tags.Macro, agentPrefix string) string {
	switch m.ID {
	case "subagent_spawn":
		role := m.Params["target_role"]
		if role == "explore" {
			role = "Explore" // Claude Code's built-in code explorer
		} else {
			role = agentPrefix + role
		}
		s := fmt.Sprintf("Agent tool (subagent_type %q", role)
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
		return fmt.Sprintf("TodoWrite item %q → %s", m.Params["label"], m.Params["state"])
	case "user_question":
		return fmt.Sprintf("AskUserQuestion (question %q, options %s)", m.Params["question"], m.Params["options"])
	}
	return ""
}
