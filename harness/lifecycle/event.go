package lifecycle

import (
	"fmt"
	"strings"
)

// Abstract event names (nexus-core's implementation guide §9).
const (
	SessionStart     = "session_start"
	UserMessage      = "user_message"
	SubagentSpawn    = "subagent_spawn"
	SubagentComplete = "subagent_complete"
	SubagentResume   = "subagent_resume"
	PreToolUse       = "pre_tool_use"
	PostToolUse      = "post_tool_use"
	SessionEnd       = "session_end"
	ContextCompact   = "context_compact"
	// Ignore is a host event nexus accepts and does nothing for (a
	// host's per-turn stop, or its notice before compaction).
	Ignore = "ignore"
)

// Fixture event types of conformance/lifecycle (digest §6.8).
const (
	FixtureSpawn    = "agent_spawn"
	FixtureComplete = "agent_complete"
	FixtureResume   = "agent_resume"
)

// EventNames lists the abstract events in lifecycle order.
var EventNames = []string{SessionStart, UserMessage, SubagentSpawn, SubagentComplete, SubagentResume, PreToolUse, PostToolUse, SessionEnd, ContextCompact}

// CanonicalName maps an event name, abstract or fixture, to the abstract
// one; ok is false for an unknown name.
func CanonicalName(name string) (string, bool) {
	switch name {
	case FixtureSpawn:
		return SubagentSpawn, true
	case FixtureComplete:
		return SubagentComplete, true
	case FixtureResume:
		return SubagentResume, true
	case Ignore:
		return Ignore, true
	}
	for _, n := range EventNames {
		if n == name {
			return n, true
		}
	}
	return "", false
}

// Tool call outcomes in the tool log.
const (
	StatusOK     = "ok"
	StatusError  = "error"
	StatusDenied = "denied"
)

// Event is one host-neutral lifecycle event. Host adapters fill it from
// their payloads; fields an event does not use stay empty.
type Event struct {
	Name      string
	SessionID string
	// Dir is the host's working directory: relative tool paths resolve
	// against it (the project root when empty).
	Dir string
	// AgentID is the subagent instance the event concerns or fired in;
	// empty for Lead.
	AgentID string
	// AgentType is the host's name for the agent's role (e.g.
	// "plugin:architect"); BareRole turns it into the
	// nexus-core agent id.
	AgentType string
	// Source says why a session started: startup, resume, clear.
	Source string
	// Prompt is the user's message (user_message).
	Prompt string
	// Tool is the host's tool name; ToolInput its arguments.
	Tool      string
	ToolInput map[string]any
	// ToolClasses are semantic classes the host declares for the tool
	// (neutral hosts); they join what nexus's capability map knows.
	ToolClasses []string
	// Status is the tool call's outcome (post_tool_use): ok or error.
	Status string
	Error  string
	// LastMessage is the subagent's final output (subagent_complete).
	LastMessage *string
	// FilesTouched lists the files the subagent created or modified; nil
	// means nexus computes it from the tool log.
	FilesTouched []string
}

// Role is the event's bare agent role ("" for Lead).
func (ev Event) Role() string { return BareRole(ev.AgentType) }

// validRole reports whether s matches ^[a-z][a-z0-9-]*$ (the agent_name
// pattern), without a regexp: it runs on every tool call.
func validRole(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// BareRole turns a host's agent type into a nexus-core agent id: the part
// after the last ':' (a host may name a plugin's agents plugin:architect),
// lower-cased, with characters outside [a-z0-9-] replaced by '-'. It
// returns "" when nothing valid remains.
func BareRole(agentType string) string {
	s := agentType
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s = strings.Trim(b.String(), "-")
	if !validRole(s) {
		return ""
	}
	return s
}

// Reply is what the engine tells the host.
type Reply struct {
	// Context is text for the model (the host's additional context).
	Context string `json:"context,omitempty"`
	// Decision is "deny" when a pre_tool_use call must not run.
	Decision string `json:"decision,omitempty"`
	// Reason explains a denial to the agent.
	Reason string `json:"reason,omitempty"`
	// Notice is a short note for the user (the host's system message).
	Notice string `json:"notice,omitempty"`
}

// Empty reports whether the reply says nothing.
func (r Reply) Empty() bool { return r == Reply{} }

// FieldError is a missing or mistyped event field.
type FieldError struct {
	Event, Field, Msg string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s event: field %s %s", e.Event, e.Field, e.Msg)
}

// Validate checks that an event carries what its handler needs.
func (ev Event) Validate() error {
	need := func(field, v string) error {
		if v == "" {
			return &FieldError{Event: ev.Name, Field: field, Msg: "is required"}
		}
		return nil
	}
	switch ev.Name {
	case SubagentSpawn, SubagentComplete, SubagentResume:
		return need("agent_id", ev.AgentID)
	case PreToolUse, PostToolUse:
		if err := need("tool", ev.Tool); err != nil {
			return err
		}
		if ev.Name == PostToolUse && ev.Status != "" && ev.Status != StatusOK && ev.Status != StatusError {
			return &FieldError{Event: ev.Name, Field: "status", Msg: fmt.Sprintf("must be ok or error, not %q", ev.Status)}
		}
	case "":
		return &FieldError{Event: "(unnamed)", Field: "event", Msg: "is required"}
	default:
		if _, ok := CanonicalName(ev.Name); !ok {
			return fmt.Errorf("unknown event %q (known: %s)", ev.Name, strings.Join(EventNames, ", "))
		}
	}
	return nil
}
