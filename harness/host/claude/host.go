package claude

import (
	"fmt"
	"os"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// Name is Claude Code's host name (--host claude).
const Name = "claude"

// MCPToolPrefix is how Claude Code names the tools of nexus's MCP server
// ("nexus", as install registers it): mcp__nexus__nx_plan_start.
const MCPToolPrefix = "mcp__" + MCPServerName + "__"

// VariantPlugin is the variant of the nexus plugin package's hooks (their
// command line says --plugin): its agents, skills and MCP tools carry the
// plugin's names (nexus:architect, nexus:nx-plan, mcp__plugin_nexus_nexus__*).
const VariantPlugin = "plugin"

// ProjectEnv is the variable Claude Code names the project with for its
// hooks.
const ProjectEnv = "CLAUDE_PROJECT_DIR"

// Host is Claude Code.
type Host struct{}

// Name implements host.Host.
func (Host) Name() string { return Name }

// HarnessID implements host.Host: Claude Code's state lives under the
// configured default (nexus).
func (Host) HarnessID() string { return "" }

// Codec implements host.Host: Claude Code's command-hook protocol.
func (Host) Codec() host.Codec { return codec{host.Denials(Deny)} }

// ProjectDir implements host.Host: CLAUDE_PROJECT_DIR, when it is a folder.
func (Host) ProjectDir(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	d := getenv(ProjectEnv)
	if d == "" {
		return ""
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}

// Profile implements host.Host: the text budget (MaxText), loading long
// skills through the Skill tool, and the post-subagent notes for Lead
// carried on Lead's next Agent (or Task) result, since nothing a
// SubagentStop hook returns reaches a model.
func (Host) Profile(env host.Env) lifecycle.HostProfile {
	pluginRoot := ""
	if env.Getenv != nil {
		pluginRoot = env.Getenv("CLAUDE_PLUGIN_ROOT")
	}
	p := lifecycle.HostProfile{
		Name:          Name,
		Map:           CapabilityMap(),
		Skills:        Spelling,
		ContextBudget: MaxText,
		SkillLoader:   SkillLoader(env.Project, env.Home, pluginRoot),
		InstallHint:   "run `nexus install claude` in the project",
		LeadReminders: true,
		SpawnTools:    SpawnTools,
		SpawnRoles:    "with the Agent tool, subagent_type = the role id",
		ToolPrefix:    MCPToolPrefix,
		ToolNames:     true,
		SkillTool:     "Skill",
	}
	if env.Variant == VariantPlugin {
		p.AgentPrefix = PluginName + ":"
		p.ToolPrefix = PluginMCPPrefix
		p.SpawnRoles = fmt.Sprintf("with the Agent tool, subagent_type = %s<role id> (for example %sarchitect)", p.AgentPrefix, p.AgentPrefix)
		p.SkillLoader = func(skill string) (string, bool) {
			if lifecycle.BareRole(skill) != skill {
				return "", false
			}
			return skillTool(PluginName + ":" + skill), true
		}
	}
	return p
}

type codec struct{ host.Denials }

func (codec) Decode(d []byte, ev string) (string, lifecycle.Event, error) { return Decode(d, ev) }
func (codec) Encode(hostEvent string, r lifecycle.Reply) ([]byte, error) {
	return Encode(hostEvent, r)
}
func (codec) Gated(hostEvent string) bool  { return Gated(hostEvent) }
func (codec) PeekEvent(data []byte) string { return PeekEvent(data) }
