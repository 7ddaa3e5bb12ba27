package codex

import (
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// Name is Codex's host name (--host codex).
const Name = "codex"

// HarnessID is the harness id Codex's state lives under when the
// configuration sets none: .nexus/state/codex/, beside Claude Code's
// .nexus/state/nexus/, so both can work in one project at once.
const HarnessID = "codex"

// MCPServerName is the name nexus registers its MCP server under in
// Codex's config.toml.
const MCPServerName = "nexus"

// MCPToolPrefix is how Codex's hooks name the tools of nexus's MCP server:
// mcp__nexus__nx_plan_start (the model calls namespace mcp__nexus, tool
// nx_plan_start).
const MCPToolPrefix = MCPToolPrefixStart + MCPServerName + "__"

// Host is Codex CLI.
type Host struct{}

// Name implements host.Host.
func (Host) Name() string { return Name }

// HarnessID implements host.Host.
func (Host) HarnessID() string { return HarnessID }

// Codec implements host.Host: Codex's command-hook protocol.
func (Host) Codec() host.Codec { return codec{host.Denials(Deny)} }

// ProjectDir implements host.Host: Codex names no project to its hooks;
// the event's working directory decides.
func (Host) ProjectDir(func(string) string) string { return "" }

// Profile implements host.Host: Codex's tools and their analysis, its
// 10,000-byte context, skills read from their files by path, subagents
// spawned with spawn_agent, and the notes for Lead carried on Lead's next
// spawn_agent or wait_agent result (nothing a SubagentStop hook returns
// reaches a model).
func (Host) Profile(env host.Env) lifecycle.HostProfile {
	return lifecycle.HostProfile{
		Name:          Name,
		Map:           CapabilityMap(),
		Analyzers:     Analyzers(),
		Skills:        Spelling,
		ContextBudget: MaxContextBytes,
		TextUnits:     lifecycle.Bytes,
		SkillLoader:   SkillLoader(env.Project, env.Home),
		InstallHint:   "run `nexus install codex` in the project",
		LeadReminders: true,
		SpawnTools:    []string{ToolSpawnAgent, ToolWaitAgent},
		SpawnRoles:    "with spawn_agent (agent_type = the role id, message = the task; find it with tool_search when it is not offered)",
		ToolPrefix:    MCPToolPrefix,
		ToolNames:     true,
		Unfollowed:    Unfollowed,
	}
}

type codec struct{ host.Denials }

func (codec) Decode(d []byte, ev string) (string, lifecycle.Event, error) { return Decode(d, ev) }
func (codec) Encode(hostEvent string, r lifecycle.Reply) ([]byte, error) {
	return Encode(hostEvent, r)
}
func (codec) Gated(hostEvent string) bool  { return Gated(hostEvent) }
func (codec) PeekEvent(data []byte) string { return PeekEvent(data) }
