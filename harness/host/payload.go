package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// What the codecs of hosts whose hooks speak JSON share: reading a payload
// strictly, its tool input, and the texts of the denials the failure
// policy sends (see the package doc).

// InputError is a payload nexus cannot use.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// InputErrorf makes an InputError.
func InputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// DecodeStrict decodes one JSON object payload into v: an empty payload,
// one that is not an object, nests deeper than jsonscan.MaxDepth (checked
// before anything is decoded) or holds more than one value is refused, and
// a mistyped field is named.
func DecodeStrict(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return InputErrorf("empty payload: expected one JSON object on stdin")
	}
	if trimmed[0] != '{' {
		return InputErrorf("invalid payload: expected a JSON object on stdin")
	}
	if err := jsonscan.CheckDepth(trimmed, jsonscan.MaxDepth); err != nil {
		return InputErrorf("payload refused: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return InputErrorf("invalid payload: field %s must be %s, not %s", te.Field, kindOf(te.Type.Kind().String()), te.Value)
		}
		return InputErrorf("invalid JSON payload: %v", err)
	}
	if dec.More() {
		return InputErrorf("invalid payload: more than one JSON value on stdin")
	}
	return nil
}

func kindOf(k string) string {
	switch k {
	case "string", "ptr":
		return "a string"
	case "bool":
		return "true or false"
	}
	return "a " + k
}

// HookInput is a command-hook payload in Claude Code's format, which Codex
// CLI follows: the members nexus reads (fields a host adds later are
// ignored; a field one host never sends stays empty).
type HookInput struct {
	SessionID      string `json:"session_id"`
	TurnID         string `json:"turn_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
	Model          string `json:"model"`
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

// DecodeHook reads a payload in that format. event is the hook event named
// on the command line ("" = the payload's hook_event_name); the two must
// agree when both are given. It returns the event's name. A payload
// nesting deeper than jsonscan.MaxDepth is refused before anything decodes
// it; when the payload cannot be decoded, the name returned is the one it
// names (PeekEvent), so that a broken PreToolUse is still denied.
func DecodeHook(data []byte, event string) (string, HookInput, error) {
	var in HookInput
	if err := DecodeStrict(data, &in); err != nil {
		if event == "" {
			event = PeekEvent(data)
		}
		return event, in, err
	}
	switch {
	case event == "" && in.HookEventName == "":
		return "", in, InputErrorf("the payload has no hook_event_name and no event was given on the command line")
	case event == "":
		return in.HookEventName, in, nil
	case in.HookEventName != "" && in.HookEventName != event:
		return event, in, InputErrorf("the payload is a %q event, but nexus was run for %q", in.HookEventName, event)
	}
	return event, in, nil
}

// HookOutput is a command hook's JSON reply in Claude Code's format, which
// Codex follows (Codex rejects unknown fields, and a rejected reply counts
// as none, so only these are written).
type HookOutput struct {
	HookSpecificOutput *HookSpecific `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string        `json:"systemMessage,omitempty"`
}

// HookSpecific is a reply's event-specific part.
type HookSpecific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Encode renders the reply as one line of JSON, without HTML escaping;
// nil when it says nothing (the host then proceeds untouched).
func (o HookOutput) Encode() ([]byte, error) {
	if o.HookSpecificOutput == nil && o.SystemMessage == "" {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DeniedFor reports whether a hook's reply denies a PreToolUse with a
// reason containing why (the doctors' canaries).
func DeniedFor(reply []byte, why string) bool {
	var o HookOutput
	if json.Unmarshal(reply, &o) != nil || o.HookSpecificOutput == nil {
		return false
	}
	h := o.HookSpecificOutput
	return h.HookEventName == "PreToolUse" && h.PermissionDecision == "deny" && strings.Contains(h.PermissionDecisionReason, why)
}

// PeekEvent returns the hook_event_name of a payload, read without
// decoding it (the payload may be cut off, too deep or not JSON after the
// name); "" when it names none.
func PeekEvent(data []byte) string {
	return jsonscan.String(data, "hook_event_name")
}

// Present reports whether a top-level key occurs in the payload.
func Present(data []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// ToolInput decodes a tool_input member: absent or null is an empty
// object; anything but an object, or a number no float64 holds, is an
// error saying so.
func ToolInput(raw json.RawMessage) (map[string]any, error) {
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

// ErrorText is the message of a tool result that reports an error: its
// error member, the first text of its MCP content, its stderr.
func ErrorText(m map[string]any) string {
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

// Denials gives a codec the failure policy's three denials (FailClosed,
// Unjudged, Unreadable) from its one way of denying a tool call with a
// reason.
type Denials func(reason string) []byte

// FailClosed implements Codec.FailClosed.
func (d Denials) FailClosed(problem string) []byte { return d(FailClosedReason(problem)) }

// Unjudged implements Codec.Unjudged.
func (d Denials) Unjudged(problem string) []byte { return d(UnjudgedReason(problem)) }

// Unreadable implements Codec.Unreadable.
func (d Denials) Unreadable(problem string) []byte { return d(UnreadableReason(problem)) }

// The reasons of the failure policy's denials, the same for every host.

// FailClosedReason is the reason of a tool call denied because nexus failed
// while checking it and gate.policy is fail-closed.
func FailClosedReason(problem string) string {
	return "nexus could not check this tool call (" + problem + "), and gate.policy is fail-closed, so it is denied. Fix the problem or set gate.policy: fail-open in .nexus/nexus.yaml."
}

// UnjudgedReason is the reason of a tool call denied because nexus could
// not load its configuration or distribution.
func UnjudgedReason(problem string) string {
	return "nexus denied this tool call: it could not load what it checks tool calls with (" + problem + "). A tool call nexus cannot check does not run; fix the problem (nexus doctor shows it)."
}

// UnreadableReason is the reason of a tool call denied because its payload
// could not be read.
func UnreadableReason(problem string) string {
	return "nexus denied this tool call: it could not read the call to check it (" + problem + "). A tool call nexus cannot check does not run; make the call again with well-formed input."
}
