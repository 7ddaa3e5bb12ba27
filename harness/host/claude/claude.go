// Package claude speaks Claude Code's command-hook protocol: it decodes one
// hook payload (JSON on stdin) into a host-neutral lifecycle.Event and
// encodes the engine's Reply as the JSON Claude Code reads from stdout. It
// holds no rules of its own.
//
// Event mapping:
//
//	SessionStart (source startup/resume/clear) → session_start
//	SessionStart (source compact)              → context_compact
//	UserPromptSubmit                           → user_message
//	PreToolUse                                 → pre_tool_use
//	PostToolUse                                → post_tool_use (status from tool_response)
//	PostToolUseFailure                         → post_tool_use (status error)
//	SubagentStart                              → subagent_spawn (a tracked agent id resumes)
//	SubagentStop                               → subagent_complete
//	SessionEnd                                 → session_end
//	Stop, PreCompact, PostCompact              → accepted, nothing to do
//
// Stop fires after every reply, not at the end of a session, so it must not
// run session_end. Claude Code re-injects context after compaction through
// SessionStart with source "compact" (it rejects hookSpecificOutput on
// PostCompact), so the compact events themselves need no reply.
package claude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/safefile"
)

// Claude Code hook event names.
const (
	SessionStart       = "SessionStart"
	UserPromptSubmit   = "UserPromptSubmit"
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	SubagentStart      = "SubagentStart"
	SubagentStop       = "SubagentStop"
	Stop               = "Stop"
	SessionEnd         = "SessionEnd"
	PreCompact         = "PreCompact"
	PostCompact        = "PostCompact"
)

// Events lists the hook events nexus understands.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, SubagentStart, SubagentStop, Stop, SessionEnd, PreCompact, PostCompact}

// Input is the part of a hook payload nexus reads (Claude Code's format,
// which both hosts speak).
type Input = host.HookInput

// InputError is a payload nexus cannot use.
type InputError = host.InputError

var inputErrorf = host.InputErrorf

// Decode parses one payload. event is the hook event named on the command
// line ("" = take hook_event_name from the payload). It returns the Claude
// Code event name and the lifecycle event.
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
	ev := lifecycle.Event{
		SessionID: in.SessionID,
		Dir:       in.CWD,
		AgentID:   in.AgentID,
		AgentType: in.AgentType,
	}
	switch name {
	case SessionStart:
		ev.Name = lifecycle.SessionStart
		ev.Source = in.Source
		if in.Source == "compact" {
			ev.Name = lifecycle.ContextCompact
		}
	case UserPromptSubmit:
		ev.Name = lifecycle.UserMessage
		if !host.Present(data, "prompt") {
			return name, ev, inputErrorf("UserPromptSubmit payload: field prompt is required")
		}
		ev.Prompt = in.Prompt
	case PreToolUse, PostToolUse, PostToolUseFailure:
		ev.Name = lifecycle.PreToolUse
		if name != PreToolUse {
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
		switch name {
		case PostToolUse:
			ev.Status, ev.Error = responseStatus(in.ToolResponse)
		case PostToolUseFailure:
			ev.Status, ev.Error = lifecycle.StatusError, in.Error
			if ev.Error == "" {
				ev.Error = "the tool failed"
			}
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
		if ev.LastMessage == nil && in.AgentTranscriptPath != "" {
			if msg, ok := lastAssistantText(in.AgentTranscriptPath); ok {
				ev.LastMessage = &msg
			}
		}
	case SessionEnd:
		ev.Name = lifecycle.SessionEnd
	case Stop, PreCompact, PostCompact:
		ev.Name = lifecycle.Ignore
	default:
		return name, ev, inputErrorf("unknown Claude Code hook event %q (nexus handles %s)", name, strings.Join(Events, ", "))
	}
	return name, ev, nil
}

// PeekEvent returns the hook_event_name of a payload, read without
// decoding it; "" when it names none.
func PeekEvent(data []byte) string { return host.PeekEvent(data) }

// responseStatus reads a tool's outcome from tool_response: MCP results
// flag isError, others say success:false, is_error or carry an error.
func responseStatus(raw json.RawMessage) (string, string) {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return lifecycle.StatusOK, ""
	}
	for _, k := range []string{"isError", "is_error"} {
		if b, _ := m[k].(bool); b {
			return lifecycle.StatusError, host.ErrorText(m)
		}
	}
	if b, ok := m["success"].(bool); ok && !b {
		return lifecycle.StatusError, host.ErrorText(m)
	}
	if s, _ := m["error"].(string); s != "" {
		return lifecycle.StatusError, s
	}
	if b, _ := m["interrupted"].(bool); b {
		return lifecycle.StatusError, "interrupted"
	}
	return lifecycle.StatusOK, ""
}

// transcriptTail bounds how much of a subagent transcript is read.
const transcriptTail = 256 << 10

// lastAssistantText finds the last assistant text in a transcript (JSONL),
// for Claude Code versions whose SubagentStop lacks last_assistant_message.
func lastAssistantText(path string) (string, bool) {
	// Only a regular file, opened without blocking: a FIFO or a device
	// named by a payload must not hang or flood the hook.
	f, st, err := safefile.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if st.Size() > transcriptTail {
		if _, err := f.Seek(st.Size()-transcriptTail, io.SeekStart); err != nil {
			return "", false
		}
	}
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), transcriptTail)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || (line.Type != "assistant" && line.Message.Role != "assistant") {
			continue
		}
		var text string
		if json.Unmarshal(line.Message.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(line.Message.Content, &parts) != nil {
				continue
			}
			var b []string
			for _, p := range parts {
				if p.Type == "text" && p.Text != "" {
					b = append(b, p.Text)
				}
			}
			text = strings.Join(b, "\n")
		}
		if text != "" {
			last = text
		}
	}
	return last, last != ""
}

// PluginName is the name of the Claude Code plugin nexus packages; Claude
// Code prefixes the plugin's agents and skills with it (nexus:architect).
const PluginName = "nexus"

// MaxText is the longest additionalContext, systemMessage or denial reason
// nexus hands Claude Code, in UTF-16 units: Claude Code replaces hook text
// over 10,000 characters with a 2,000-character preview and a file path
// (measured with 2.1.x: 9,999 arrive whole, 10,001 do not).
const MaxText = 9999

// SpawnTools are Claude Code's subagent-spawning tools: Agent (2.1), Task
// (before).
var SpawnTools = []string{"Agent", "Task"}

// Encode renders a reply for Claude Code. nil means print nothing (the
// call proceeds untouched). It is the one place that enforces MaxText on
// everything nexus says to Claude Code: the lifecycle engine fits its
// text to the budget with pointers to the rest, and whatever still exceeds
// it is cut here with a note, never silently.
func Encode(event string, r lifecycle.Reply) ([]byte, error) {
	r.Context = lifecycle.CutText(r.Context, MaxText)
	r.Notice = lifecycle.CutText(r.Notice, MaxText)
	r.Reason = lifecycle.CutText(r.Reason, MaxText)
	out := host.HookOutput{}
	switch event {
	case SessionStart, UserPromptSubmit, SubagentStart:
		if r.Context != "" {
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case PreToolUse:
		switch {
		case r.Decision == "deny":
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: r.Reason}
		case r.Context != "":
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, AdditionalContext: r.Context}
		}
		// A note for the user (the configuration's problems) rides on
		// any answer, a denial included.
		out.SystemMessage = r.Notice
	case PostToolUse:
		// Context (from plugins) reaches the model after the tool's result.
		if r.Context != "" {
			out.HookSpecificOutput = &host.HookSpecific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case PostToolUseFailure, SubagentStop, SessionEnd:
		// Nothing reaches the model from these; notes go to the user.
		out.SystemMessage = r.Notice
	}
	return out.Encode()
}

// Deny is the reply denying a PreToolUse with a reason; the failure
// policy's denials (host.Denials) are made with it.
func Deny(reason string) []byte {
	b, _ := Encode(PreToolUse, lifecycle.Reply{Decision: "deny", Reason: reason})
	return b
}

// Gated reports whether an event is the tool gate (where fail-closed applies).
func Gated(event string) bool { return event == PreToolUse }

// SkillLoader tells the lifecycle engine how the model loads an installed
// skill with Claude Code's Skill tool: a skill file in the project's or the
// user's .claude/skills, or in the nexus plugin (pluginRoot, from
// CLAUDE_PLUGIN_ROOT, whose skills Claude Code names nexus:<id>).
func SkillLoader(project, home, pluginRoot string) func(skill string) (string, bool) {
	return func(skill string) (string, bool) {
		if lifecycle.BareRole(skill) != skill {
			return "", false
		}
		for _, dir := range []string{project, home} {
			if dir == "" {
				continue
			}
			if st, err := os.Stat(filepath.Join(dir, ".claude", "skills", skill, "SKILL.md")); err == nil && st.Mode().IsRegular() {
				return skillTool(skill), true
			}
		}
		if pluginRoot != "" {
			if st, err := os.Stat(filepath.Join(pluginRoot, "skills", skill, "SKILL.md")); err == nil && st.Mode().IsRegular() {
				return skillTool(PluginName + ":" + skill), true
			}
		}
		return "", false
	}
}

func skillTool(name string) string { return fmt.Sprintf(`the Skill tool (input {"skill": %q})`, name) }
