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
