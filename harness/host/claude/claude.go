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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/jsonscan"
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

// Input is the part of a Claude Code hook payload nexus reads. Fields
// Claude Code adds later are ignored.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
	// Hooks fired inside a subagent carry its id and type; SubagentStart
	// and SubagentStop always do.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`

	Source string `json:"source"` // SessionStart
	Prompt string `json:"prompt"` // UserPromptSubmit

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        string          `json:"error"` // PostToolUseFailure

	StopHookActive       bool    `json:"stop_hook_active"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	AgentTranscriptPath  string  `json:"agent_transcript_path"`

	Reason  string `json:"reason"`  // SessionEnd
	Trigger string `json:"trigger"` // PreCompact, PostCompact
}

// InputError is a payload nexus cannot use.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Decode parses one payload. event is the hook event named on the command
// line ("" = take hook_event_name from the payload). It returns the Claude
// Code event name and the lifecycle event.
//
// A payload nesting deeper than jsonscan.MaxDepth is refused before
// anything decodes it. When the payload cannot be decoded, the event
// returned is the one it names (PeekEvent), so that a broken PreToolUse is
// still denied.
func Decode(data []byte, event string) (string, lifecycle.Event, error) {
	var in Input
	if err := decodeStrict(data, &in); err != nil {
		if event == "" {
			event = PeekEvent(data)
		}
		return event, lifecycle.Event{}, err
	}
	name := event
	switch {
	case name == "" && in.HookEventName == "":
		return "", lifecycle.Event{}, inputErrorf("the payload has no hook_event_name and no event was given on the command line")
	case name == "":
		name = in.HookEventName
	case in.HookEventName != "" && in.HookEventName != name:
		return name, lifecycle.Event{}, inputErrorf("the payload is a %q event, but nexus was run for %q", in.HookEventName, name)
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
		if !present(data, "prompt") {
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
		input, err := toolInput(in.ToolInput)
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

// decodeStrict decodes the payload, turning type mismatches into messages
// that name the field.
func decodeStrict(data []byte, in *Input) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return inputErrorf("empty payload: expected one JSON object on stdin")
	}
	if trimmed[0] != '{' {
		return inputErrorf("invalid payload: expected a JSON object on stdin")
	}
	if err := jsonscan.CheckDepth(trimmed, jsonscan.MaxDepth); err != nil {
		return inputErrorf("payload refused: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return inputErrorf("invalid payload: field %s must be %s, not %s", te.Field, kindOf(te.Type.Kind().String()), te.Value)
		}
		return inputErrorf("invalid JSON payload: %v", err)
	}
	if dec.More() {
		return inputErrorf("invalid payload: more than one JSON value on stdin")
	}
	return nil
}

func kindOf(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "ptr":
		return "a string"
	}
	return "a " + k
}

// PeekEvent returns the hook_event_name of a payload, read without
// decoding it (the payload may be cut off, too deep or not JSON after the
// name); "" when it names none.
func PeekEvent(data []byte) string {
	return jsonscan.String(data, "hook_event_name")
}

// present reports whether a top-level key occurs in the payload.
func present(data []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func toolInput(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("must be a JSON object")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
			return nil, fmt.Errorf("holds a number too large for a 64-bit float (%s); JSON numbers nexus reads must lie within ±1.8e308",
				clipValue(te.Value))
		}
		return nil, fmt.Errorf("is not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return m, nil
}

// clipValue shortens a piece of the payload quoted in an error.
func clipValue(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// responseStatus reads a tool's outcome from tool_response: MCP results
// flag isError, others say success:false, is_error or carry an error.
func responseStatus(raw json.RawMessage) (string, string) {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return lifecycle.StatusOK, ""
	}
	for _, k := range []string{"isError", "is_error"} {
		if b, _ := m[k].(bool); b {
			return lifecycle.StatusError, firstText(m)
		}
	}
	if b, ok := m["success"].(bool); ok && !b {
		return lifecycle.StatusError, firstText(m)
	}
	if s, _ := m["error"].(string); s != "" {
		return lifecycle.StatusError, s
	}
	if b, _ := m["interrupted"].(bool); b {
		return lifecycle.StatusError, "interrupted"
	}
	return lifecycle.StatusOK, ""
}

func firstText(m map[string]any) string {
	if s, _ := m["error"].(string); s != "" {
		return s
	}
	if c, ok := m["content"].([]any); ok {
		for _, item := range c {
			if im, ok := item.(map[string]any); ok {
				if s, _ := im["text"].(string); s != "" {
					return s
				}
			}
		}
	}
	if s, _ := m["stderr"].(string); s != "" {
		return s
	}
	return "the tool reported an error"
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

// hookOutput is Claude Code's JSON hook output.
type hookOutput struct {
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
}

type specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
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
	out := hookOutput{}
	switch event {
	case SessionStart, UserPromptSubmit, SubagentStart:
		if r.Context != "" {
			out.HookSpecificOutput = &specific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case PreToolUse:
		switch {
		case r.Decision == "deny":
			out.HookSpecificOutput = &specific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: r.Reason}
		case r.Context != "":
			out.HookSpecificOutput = &specific{HookEventName: event, AdditionalContext: r.Context}
		}
		// A note for the user (the configuration's problems) rides on
		// any answer, a denial included.
		out.SystemMessage = r.Notice
	case PostToolUse:
		// Context (from plugins) reaches the model after the tool's result.
		if r.Context != "" {
			out.HookSpecificOutput = &specific{HookEventName: event, AdditionalContext: r.Context}
		}
		out.SystemMessage = r.Notice
	case PostToolUseFailure, SubagentStop, SessionEnd:
		// Nothing reaches the model from these; notes go to the user.
		out.SystemMessage = r.Notice
	}
	if out.HookSpecificOutput == nil && out.SystemMessage == "" {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FailClosed is the reply to a PreToolUse nexus could not check while
// gate.policy is fail-closed: a denial naming the problem.
func FailClosed(problem string) []byte {
	b, _ := Encode(PreToolUse, lifecycle.Reply{Decision: "deny", Reason: "nexus could not check this tool call (" + problem + "), and gate.policy is fail-closed, so it is denied. Fix the problem or set gate.policy: fail-open in .nexus/nexus.yaml."})
	return b
}

// Unjudged is the reply to a PreToolUse nexus has nothing to check with:
// its configuration or the nexus-core distribution could not be loaded
// (a repository can ship either broken). A denial, whatever gate.policy
// says: without them no capability of any agent is known.
func Unjudged(problem string) []byte {
	b, _ := Encode(PreToolUse, lifecycle.Reply{Decision: "deny", Reason: "nexus denied this tool call: it could not load what it checks tool calls with (" + problem + "). A tool call nexus cannot check does not run; fix the problem (nexus doctor shows it)."})
	return b
}

// Unreadable is the reply to a PreToolUse whose payload nexus could not
// read: a denial, whatever gate.policy says, since nothing about the call
// could be checked.
func Unreadable(problem string) []byte {
	b, _ := Encode(PreToolUse, lifecycle.Reply{Decision: "deny", Reason: "nexus denied this tool call: it could not read the call to check it (" + problem + "). A tool call nexus cannot check does not run; make the call again with well-formed input."})
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
