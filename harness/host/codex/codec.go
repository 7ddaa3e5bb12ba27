// Package codex holds what nexus knows about Codex CLI (0.169.0, facts in
// docs/codex-notes.md) as a host: its hook protocol (Decode, Encode), its
// patch format (ParsePatch, and ShellPatches for the apply_patch heredoc
// sent through the shell), hook trust (TrustHash, HookKey), the files nexus
// writes for it (hooks.json, config.toml tables, agent TOML, SKILL.md) and
// byte-preserving edits of the user's config.toml. It holds no rules of
// its own and writes no file: the installer, the gate and the lifecycle
// engine call it.
//
// Event mapping (Decode):
//
//	SessionStart (startup, resume, clear, fork) → session_start
//	SessionStart (source compact)               → context_compact
//	UserPromptSubmit                            → user_message (a subagent's carries its agent_id)
//	PreToolUse                                  → pre_tool_use
//	PostToolUse                                 → post_tool_use (status from tool_response)
//	SubagentStart                               → subagent_spawn
//	SubagentStop                                → subagent_complete
//	SessionEnd                                  → session_end
//	Stop, PermissionRequest, PreCompact,
//	PostCompact, Interrupt                      → accepted, nothing to do
//
// Codex fires no SubagentStart when a subagent is resumed with send_input:
// the resumed agent's UserPromptSubmit (with its agent_id) is the only
// sign, so the engine has to count an agent-scoped user_message for an
// agent it tracks as completed as a resume. Stop ends every Lead turn and
// a subagent's end fires SubagentStop, so Stop must not end anything.
// After a compaction Codex fires SessionStart again with source "compact",
// which carries the re-injected context; the compact events need no reply.
package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// Codex hook event names.
const (
	SessionStart      = "SessionStart"
	UserPromptSubmit  = "UserPromptSubmit"
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
	PreCompact        = "PreCompact"
	PostCompact       = "PostCompact"
	SubagentStart     = "SubagentStart"
	SubagentStop      = "SubagentStop"
	Stop              = "Stop"
	SessionEnd        = "SessionEnd"
	Interrupt         = "Interrupt"
)

// Events lists the hook events Codex 0.169.0 runs command hooks for.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact, PostCompact, SubagentStart, SubagentStop, Stop, SessionEnd, Interrupt}

// Tool names as Codex's hooks report them (tool_name).
const (
	// ToolShell is exec_command (and the other shell tools): tool_input
	// {"command": the command line}.
	ToolShell = "Bash"
	// ToolApplyPatch is the patch tool: tool_input {"command": the patch}.
	ToolApplyPatch = "apply_patch"
	// ToolSpawnAgent starts a subagent: {"agent_type", "message"}.
	ToolSpawnAgent = "spawn_agent"
	// ToolWaitAgent awaits subagents: {"targets", "timeout_ms"}.
	ToolWaitAgent = "multi_agent_v1wait_agent"
	// ToolSendInput resumes a subagent: {"target", "message"}.
	ToolSendInput = "multi_agent_v1send_input"
	// MCPToolPrefixStart starts an MCP tool's name: mcp__<server>__<tool>.
	MCPToolPrefixStart = "mcp__"
)

// SpawnTools are the tools that start a subagent.
var SpawnTools = []string{ToolSpawnAgent}

// Input is the part of a hook payload nexus reads (Claude Code's format,
// which both hosts speak).
type Input = host.HookInput

// InputError is a payload nexus cannot use.
type InputError = host.InputError

var inputErrorf = host.InputErrorf

// Decode parses one payload. event is the hook event named on the command
// line ("" = take hook_event_name from the payload). It returns the Codex
// event name and the lifecycle event.
//
// A payload nesting deeper than jsonscan.MaxDepth is refused before
// anything decodes it. When the payload cannot be decoded, the event
// returned is the one it names (PeekEvent), so that a broken PreToolUse is
// still denied.
func Decode(data []byte, event string) (string, lifecycle.Event, error) {
	name, in, err := host.DecodeHook(data, event)
	if err != nil {
		return name, lifecycle.Event{}, err
	}
	ev := lifecycle.Event{SessionID: in.SessionID, Dir: in.CWD, AgentID: in.AgentID, AgentType: in.AgentType}
	switch name {
	case SessionStart:
		ev.Name, ev.Source = lifecycle.SessionStart, in.Source
		if in.Source == "compact" {
			ev.Name = lifecycle.ContextCompact
		}
	case UserPromptSubmit:
		ev.Name = lifecycle.UserMessage
		if !host.Present(data, "prompt") {
			return name, ev, inputErrorf("UserPromptSubmit payload: field prompt is required")
		}
		ev.Prompt = in.Prompt
	case PreToolUse, PostToolUse:
		ev.Name = lifecycle.PreToolUse
		if name == PostToolUse {
			ev.Name = lifecycle.PostToolUse
		}
		if in.ToolName == "" {
			return name, ev, inputErrorf("%s payload: field tool_name is required", name)
		}
		ev.Tool = in.ToolName
		input, err := host.ToolInput(in.ToolInput)
		if err != nil {
			return name, ev, inputErrorf("%s payload: field tool_input %v", name, err)
		}
		ev.ToolInput = input
		if name == PostToolUse {
			ev.Status, ev.Error = responseStatus(in.ToolResponse)
		}
	case SubagentStart:
		ev.Name = lifecycle.SubagentSpawn
		if in.AgentID == "" {
			return name, ev, inputErrorf("SubagentStart payload: field agent_id is required")
		}
	case SubagentStop:
		ev.Name = lifecycle.SubagentComplete
		if in.AgentID == "" {
			return name, ev, inputErrorf("SubagentStop payload: field agent_id is required")
		}
		ev.LastMessage = in.LastAssistantMessage
	case SessionEnd:
		ev.Name = lifecycle.SessionEnd
	case Stop, PermissionRequest, PreCompact, PostCompact, Interrupt:
		ev.Name = lifecycle.Ignore
	default:
		return name, ev, inputErrorf("unknown Codex hook event %q (nexus handles %s)", name, strings.Join(Events, ", "))
	}
	return name, ev, nil
}

// PeekEvent returns the hook_event_name of a payload, read without
// decoding it; "" when it names none.
func PeekEvent(data []byte) string { return host.PeekEvent(data) }

// responseStatus reads a tool's outcome from tool_response. Codex reports
// MCP results as an object (isError on failure) and the other tools'
// output as text; apply_patch's text starts "Exit code: N". A shell
// command's text carries no exit status, so it counts as ok.
func responseStatus(raw json.RawMessage) (string, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return lifecycle.StatusOK, ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return lifecycle.StatusOK, ""
		}
		if code, ok := exitCode(s); ok && code != 0 {
			return lifecycle.StatusError, s
		}
	case '{':
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			return lifecycle.StatusOK, ""
		}
		for _, k := range []string{"isError", "is_error"} {
			if b, _ := m[k].(bool); b {
				return lifecycle.StatusError, host.ErrorText(m)
			}
		}
		if s, _ := m["error"].(string); s != "" {
			return lifecycle.StatusError, s
		}
	}
	return lifecycle.StatusOK, ""
}

// exitCode reads the "Exit code: N" first line of Codex's tool output.
func exitCode(s string) (int, bool) {
	rest, ok := strings.CutPrefix(s, "Exit code: ")
	if !ok {
		return 0, false
	}
	line, _, _ := strings.Cut(rest, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(line))
	return n, err == nil
}

// MaxContextBytes is the longest additionalContext that reaches the model
// whole: Codex turns a longer one (over 2,500 tokens it estimates as bytes
// / 4) into a preview and a file path (measured: 10,000 bytes whole,
// 10,001 not).
const MaxContextBytes = 10_000

// Encode renders a reply for Codex. nil means print nothing (the call
// proceeds untouched). It is the last guard of Codex's limit: text the
// model reads is cut to MaxContextBytes with a note, never silently.
//
// A PreToolUse denial becomes permissionDecision "deny": Codex does not run
// the call and tells the model "Command blocked by PreToolUse hook:
// <reason>. Command: <command>" (shell and apply_patch) or "Tool call
// blocked by PreToolUse hook: <reason>. Tool: <tool>". additionalContext
// becomes a developer message (SessionStart: before the first prompt;
// UserPromptSubmit: after the prompt; Pre/PostToolUse: between the call and
// its output; SubagentStart: in the subagent's conversation). systemMessage
// (Notice) reaches only the user's screen. SessionEnd takes no output.
func Encode(event string, r lifecycle.Reply) ([]byte, error) {
	r.Context = cutBytes(r.Context, MaxContextBytes)
	r.Reason = cutBytes(r.Reason, MaxContextBytes)
	r.Notice = cutBytes(r.Notice, MaxContextBytes)
	out := host.HookOutput{}
	switch event {
	case SessionStart, UserPromptSubmit, SubagentStart, PostToolUse:
		if r.Context != "" {
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case PreToolUse:
		switch {
		case r.Decision == "deny":
			reason := r.Reason
			if reason == "" {
				reason = "nexus denied this tool call"
			}
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: reason}
		case r.Context != "":
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case SessionEnd:
		return nil, nil
	default:
		// SubagentStop, Stop, the compact events, PermissionRequest,
		// Interrupt: only the common fields; nothing reaches the model.
		out.SystemMessage = r.Notice
	}
	return out.Encode()
}

// cutBytes cuts s to at most max bytes at a line boundary where one is
// near (never inside a UTF-8 sequence), and says so at the end.
func cutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n[nexus cut this message to %d of %d bytes: Codex shows at most %d. Ask for the rest with the nexus tools (nx_context, nx_plan_status, nx_task_list).]", max, len(s), max)
	keep := max - len(note)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	cut := s[:keep]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 && keep-i < 400 {
		cut = cut[:i]
	}
	return cut + note
}

// Deny is the reply denying a PreToolUse with a reason; the failure
// policy's denials (host.Denials) are made with it.
func Deny(reason string) []byte {
	b, _ := Encode(PreToolUse, lifecycle.Reply{Decision: "deny", Reason: reason})
	return b
}

// Gated reports whether an event is the tool gate (where fail-closed
// applies). Codex runs a call whose hook fails or times out, so the gate
// must answer with a denial, never an exit status.
func Gated(event string) bool { return event == PreToolUse }
