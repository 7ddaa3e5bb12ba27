package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/tags"
)

// Spelling is how skill bodies' primitives read in Codex: subagents are
// spawned with spawn_agent (agent_type, message), awaited with wait_agent
// and resumed with send_input; there is no skill tool (a skill is a file
// the model reads).
var Spelling = &tags.Spelling{
	Host:  Name,
	Macro: spell,
	Docs: map[string]string{
		"resume_invocation":     "Resuming a subagent in Codex: a subagent that finished stays available; send_input (target = its agent_id, message = the follow-up) resumes it and wait_agent awaits it again. Its agent_id is what spawn_agent returned, and nexus records it in .nexus/state/codex/agent-tracker.json. When resuming is not possible, spawn a fresh subagent without comment (nexus-core's resume gating). A bounded-tier agent resumed for the same artifact must be told to re-read its target files first.",
		"instruction_file":      "Codex's project instruction file is AGENTS.md at the project root.",
		"slash_command_display": "In Codex, skills are typed as bracket tags ([plan], [run], [sync]); once `nexus install codex` has installed them, Codex also lists them to the model as skills (nx-plan, nx-run, nx-sync, nx-init; nx-init has no tag), each a SKILL.md file under .agents/skills that the model reads.",
	},
	Note: func(toolPrefix string) string {
		return fmt.Sprintf("Tools named %s* in these instructions are nexus's MCP tools; Codex calls them in the namespace mcp__%s (its hooks name them %s%s*; find them with tool_search when they are not offered directly).", toolPrefix, MCPServerName, MCPToolPrefix, toolPrefix)
	},
}

func spell(m tags.Macro, agentPrefix string) string {
	switch m.ID {
	case "subagent_spawn":
		role := m.Params["target_role"]
		if role == "explore" {
			role = "explorer" // Codex's built-in code explorer
		} else {
			role = agentPrefix + role
		}
		s := fmt.Sprintf("spawn_agent (agent_type %q", role)
		if n := m.Params["name"]; n != "" {
			s += fmt.Sprintf(", for %q", n)
		}
		if h := m.Params["resume_tier_hint"]; h != "" {
			s += ", resume tier " + h
		}
		prompt := m.Params["prompt"]
		if strings.Contains(prompt, "\n") {
			return s + ") with this message:\n" + prompt
		}
		return s + fmt.Sprintf(", message %q)", prompt)
	}
	return ""
}

// SkillLoader tells the lifecycle engine how the model loads an installed
// skill in Codex, which has no skill tool: by reading its SKILL.md (in the
// project's .agents/skills or the user's ~/.agents/skills) with the
// shell, by absolute path.
func SkillLoader(project, home string) func(skill string) (string, bool) {
	return func(skill string) (string, bool) {
		if lifecycle.BareRole(skill) != skill {
			return "", false
		}
		for _, dir := range []string{project, home} {
			if dir == "" {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(SkillPath(skill)))
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return fmt.Sprintf("a shell read of its skill file, whole: `cat %s`", install.ShellQuote(p)), true
			}
		}
		return "", false
	}
}
