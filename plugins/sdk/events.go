package sdk

import "slices"

// EventName names a lifecycle event a plugin can subscribe to. On the wire
// and in manifests it is the plain string ("pre_tool_use").
type EventName string

// The lifecycle events a plugin can subscribe to (nexus-core's
// implementation guide, plus subagent_resume), in lifecycle order. New
// events may be added in a minor version; a plugin receives only the ones
// it subscribed to.
const (
	EventSessionStart     EventName = "session_start"
	EventUserMessage      EventName = "user_message"
	EventSubagentSpawn    EventName = "subagent_spawn"
	EventSubagentComplete EventName = "subagent_complete"
	EventSubagentResume   EventName = "subagent_resume"
	EventPreToolUse       EventName = "pre_tool_use"
	EventPostToolUse      EventName = "post_tool_use"
	EventSessionEnd       EventName = "session_end"
	EventContextCompact   EventName = "context_compact"
)

var eventNames = []EventName{
	EventSessionStart, EventUserMessage, EventSubagentSpawn, EventSubagentComplete,
	EventSubagentResume, EventPreToolUse, EventPostToolUse, EventSessionEnd, EventContextCompact,
}

// EventNames lists every event name in lifecycle order.
func EventNames() []EventName { return slices.Clone(eventNames) }

// Known reports whether e is one of the lifecycle events.
func (e EventName) Known() bool { return slices.Contains(eventNames, e) }
