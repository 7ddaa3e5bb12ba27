// Package neutral decodes nexus-core's abstract lifecycle events from a
// small JSON shape and encodes the engine's reply, so any host can be wired
// to nexus with a thin shim (the shape is documented in docs/hooks.md).
//
// Input, one JSON object (unknown fields are errors):
//
//	{"event": "pre_tool_use", "session_id": "s1", "cwd": "/repo",
//	 "agent_id": "a1", "agent_type": "architect",
//	 "tool": "apply_patch", "tool_input": {"path": "x.go"},
//	 "tool_classes": ["partial_file_edit"]}
//
// Output, one JSON object: {"decision": "deny", "reason": "...",
// "context": "...", "notice": "..."} with empty members left out ({} when
// there is nothing to say).
package neutral

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// Input is the neutral event shape.
type Input struct {
	Event     string `json:"event"`
	SessionID string `json:"session_id"`
	CWD       string `json:"cwd"`
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// Source is why a session started: startup, resume or clear.
	Source string `json:"source"`
	Prompt string `json:"prompt"`

	Tool        string         `json:"tool"`
	ToolInput   map[string]any `json:"tool_input"`
	ToolClasses []string       `json:"tool_classes"`
	// Status and Error are the outcome of a post_tool_use: ok or error.
	Status string `json:"status"`
	Error  string `json:"error"`

	LastMessage  *string  `json:"last_message"`
	FilesTouched []string `json:"files_touched"`
}

// InputError is an event nexus cannot use.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Decode parses one event. event, when not empty, is the name given on the
// command line; it must agree with the payload's "event" when both are set.
func Decode(data []byte, event string) (string, lifecycle.Event, error) {
	var in Input
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return event, lifecycle.Event{}, &InputError{"invalid payload: expected one JSON object on stdin"}
	}
	if err := jsonscan.CheckDepth(trimmed, jsonscan.MaxDepth); err != nil {
		if event == "" {
			event = PeekEvent(trimmed)
		}
		return event, lifecycle.Event{}, &InputError{"payload refused: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if event == "" {
			// Name the event when the payload says it, so a broken
			// pre_tool_use is still denied.
			event = PeekEvent(trimmed)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			v := te.Value
			if len(v) > 64 {
				v = v[:64] + "…"
			}
			if strings.HasPrefix(te.Value, "number") && te.Type.Kind() == reflect.Float64 {
				return event, lifecycle.Event{}, &InputError{fmt.Sprintf("invalid payload: field %s holds a number too large for a 64-bit float (%s); JSON numbers nexus reads must lie within ±1.8e308", te.Field, v)}
			}
			return event, lifecycle.Event{}, &InputError{fmt.Sprintf("invalid payload: field %s has the wrong type (%s)", te.Field, v)}
		}
		return event, lifecycle.Event{}, &InputError{"invalid payload: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if dec.More() {
		return event, lifecycle.Event{}, &InputError{"invalid payload: more than one JSON value on stdin"}
	}
	name := event
	switch {
	case name == "" && in.Event == "":
		return "", lifecycle.Event{}, &InputError{"the payload has no \"event\" and no event was given on the command line"}
	case name == "":
		name = in.Event
	case in.Event != "" && in.Event != name:
		return name, lifecycle.Event{}, &InputError{fmt.Sprintf("the payload is a %q event, but nexus was run for %q", in.Event, name)}
	}
	canon, ok := lifecycle.CanonicalName(name)
	if !ok || canon == lifecycle.Ignore {
		return name, lifecycle.Event{}, &InputError{fmt.Sprintf("unknown event %q (known: %s)", name, strings.Join(lifecycle.EventNames, ", "))}
	}
	ev := lifecycle.Event{
		Name:         canon,
		SessionID:    in.SessionID,
		Dir:          in.CWD,
		AgentID:      in.AgentID,
		AgentType:    in.AgentType,
		Source:       in.Source,
		Prompt:       in.Prompt,
		Tool:         in.Tool,
		ToolInput:    in.ToolInput,
		ToolClasses:  in.ToolClasses,
		Status:       in.Status,
		Error:        in.Error,
		LastMessage:  in.LastMessage,
		FilesTouched: in.FilesTouched,
	}
	if ev.ToolInput == nil {
		ev.ToolInput = map[string]any{}
	}
	if err := ev.Validate(); err != nil {
		return name, ev, &InputError{err.Error()}
	}
	return name, ev, nil
}

// Encode renders a reply: always one JSON object.
func Encode(r lifecycle.Reply) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PeekEvent returns the "event" of a payload, read without decoding it
// (the payload may be cut off, too deep or not JSON after the name); ""
// when it names none.
func PeekEvent(data []byte) string {
	return jsonscan.String(data, "event")
}

// Unjudged is the reply to a pre_tool_use nexus has nothing to check
// with (its distribution could not be loaded): a
// denial, whatever gate.policy says.
func Unjudged(problem string) []byte {
	b, _ := Encode(lifecycle.Reply{Decision: "deny", Reason: "nexus denied this tool call: it could not load what it checks tool calls with (" + problem + "). A tool call nexus cannot check does not run."})
	return b
}

// Unreadable is the reply to a pre_tool_use whose payload nexus could not
// read: a denial, whatever gate.policy says.
func Unreadable(problem string) []byte {
	b, _ := Encode(lifecycle.Reply{Decision: "deny", Reason: "nexus denied this tool call: it could not read the call to check it (" + problem + "). A tool call nexus cannot check does not run."})
	return b
}

// FailClosed is the reply to a pre_tool_use nexus could not check while
// gate.policy is fail-closed.
func FailClosed(problem string) []byte {
	b, _ := Encode(lifecycle.Reply{Decision: "deny", Reason: "nexus could not check this tool call (" + problem + "), and gate.policy is fail-closed, so it is denied."})
	return b
}
