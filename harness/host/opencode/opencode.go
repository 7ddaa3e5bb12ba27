// Package opencode holds what nexus knows about OpenCode (1.18.33, facts in
// docs/opencode-notes.md) as a host: the plugin nexus generates for it
// (Plugin) and the wire protocol between that plugin and nexus (Request,
// Reply, Serve), the codec from OpenCode's hooks to nexus's lifecycle
// events (Codec) with the per-session record it needs (Sessions), the
// capability map of OpenCode's tools (CapabilityMap), byte-preserving
// edits of opencode.json (EditConfig), and the agent and skill files
// (Agent, Skill). It decides nothing itself and writes no file but its
// session record: the installer, the gate and the lifecycle engine call it.
//
// OpenCode has no command hooks: a plugin (JavaScript in OpenCode's own
// process) sees every hook. nexus's plugin forwards the hooks below to
// nexus and applies the answers; docs/opencode.md describes the whole
// path. Event mapping (Codec.Decode):
//
//	event session.created (info.parentID set)  → nothing; the child session's
//	                                             parent and agent are recorded
//	chat.message, root session, first in
//	  this OpenCode process                    → session_start (source startup,
//	                                             or resume for a session seen
//	                                             before), then user_message
//	chat.message, root session                 → user_message (the text parts
//	                                             the user wrote)
//	chat.message, root session, a synthetic
//	  <task … state="completed|error"> part    → subagent_complete (a
//	                                             background task's result)
//	chat.message, child session, first         → subagent_spawn (agent id: the
//	                                             child session id)
//	chat.message, child session, completed     → subagent_resume (task_id)
//	tool.execute.before                        → pre_tool_use
//	tool.execute.after                         → post_tool_use (status ok:
//	                                             OpenCode runs it only after a
//	                                             call that succeeded)
//	tool.execute.after of task, state
//	  completed or error                       → subagent_complete (last
//	                                             message: the task's result),
//	                                             then post_tool_use
//	dispose                                    → session_end for the root
//	                                             sessions this OpenCode
//	                                             process started
//
// Tool calls in a child session carry its agent id (the child session id)
// and role (the agent's name). Tool names are OpenCode's own: nexus's MCP
// tools are <server>_<tool> (nexus_nx_task_add), which MCPName reads for
// the gate.
package opencode

import (
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// Name is OpenCode's host name (--host opencode) and the harness id its
// state lives under (.nexus/state/opencode/).
const Name = "opencode"

// OpenCode's plugin hooks the plugin forwards.
const (
	HookChatMessage = "chat.message"
	HookToolBefore  = "tool.execute.before"
	HookToolAfter   = "tool.execute.after"
	HookEvent       = "event"
	HookDispose     = "dispose"
)

// Hooks lists the hooks the plugin forwards.
var Hooks = []string{HookChatMessage, HookToolBefore, HookToolAfter, HookEvent, HookDispose}

// EventSessionCreated is the bus event of a new session; for a task's
// child session its info carries parentID and agent.
const EventSessionCreated = "session.created"

// Events lists the bus events the plugin forwards (the event hook sees
// every bus event, streaming deltas included: the rest stay in OpenCode).
var Events = []string{EventSessionCreated}

// OpenCode's built-in tools nexus reads the arguments of.
const (
	ToolBash       = "bash"        // {command, timeout?, workdir?, description?}
	ToolRead       = "read"        // {filePath, offset?, limit?}
	ToolWrite      = "write"       // {filePath, content}
	ToolEdit       = "edit"        // {filePath, oldString, newString, replaceAll?}
	ToolApplyPatch = "apply_patch" // {patchText}: Codex's patch format
	ToolTask       = "task"        // {description, prompt, subagent_type, task_id?, command?}
	ToolSkill      = "skill"       // {name}
	// ToolInvalid is what OpenCode calls a call of a tool the agent is not
	// offered ({tool, error}); it fails without running anything.
	ToolInvalid = "invalid"
)

// SpawnTools are OpenCode's tools that start a subagent.
var SpawnTools = []string{ToolTask}

// MCPServerName is the name nexus's MCP server is registered under in
// opencode.json; NauroServerName the decision store's, when it is served
// on its own.
const (
	MCPServerName   = "nexus"
	NauroServerName = decisionsapi.ServerName
)

// MCPToolPrefix is how OpenCode names nexus's MCP tools: nexus_nx_task_add.
const MCPToolPrefix = MCPServerName + "_"

// MCPName is the name a tool of nexus's MCP servers is served under, as
// OpenCode's name for it (<server>_<tool>: nexus_nx_task_add,
// nauro_check_decision) holds it; "" for every other tool. It is what the
// gate needs to know of OpenCode's MCP naming (gate.Options.MCPName):
// OpenCode joins server and tool with one underscore, so only the servers
// nexus registers are told apart from the built-in tools.
func MCPName(hostTool string) string {
	for _, server := range []string{MCPServerName, NauroServerName} {
		if rest, ok := strings.CutPrefix(hostTool, server+"_"); ok && rest != "" {
			return rest
		}
	}
	return ""
}
