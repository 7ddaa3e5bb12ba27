package sdk

// The abstract lifecycle events a plugin can subscribe to (nexus-core's
// implementation guide, plus subagent_resume).
const (
	EventSessionStart     = "session_start"
	EventUserMessage      = "user_message"
	EventSubagentSpawn    = "subagent_spawn"
	EventSubagentComplete = "subagent_complete"
	EventSubagentResume   = "subagent_resume"
	EventPreToolUse       = "pre_tool_use"
	EventPostToolUse      = "post_tool_use"
	EventSessionEnd       = "session_end"
	EventContextCompact   = "context_compact"
)

// EventNames lists every event name in lifecycle order.
func EventNames() []string {
	return []string{
		EventSessionStart, EventUserMessage, EventSubagentSpawn, EventSubagentComplete,
		EventSubagentResume, EventPreToolUse, EventPostToolUse, EventSessionEnd, EventContextCompact,
	}
}

// IsEvent reports whether name is one of the lifecycle events.
func IsEvent(name string) bool {
	for _, n := range EventNames() {
		if n == name {
			return true
		}
	}
	return false
}
