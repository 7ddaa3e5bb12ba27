package sdk

import "github.com/nexus-harness/nexus/plugins/sdk/contract"

// The abstract lifecycle events a plugin can subscribe to (nexus-core's
// implementation guide, plus subagent_resume).
const (
	EventSessionStart     = contract.EventSessionStart
	EventUserMessage      = contract.EventUserMessage
	EventSubagentSpawn    = contract.EventSubagentSpawn
	EventSubagentComplete = contract.EventSubagentComplete
	EventSubagentResume   = contract.EventSubagentResume
	EventPreToolUse       = contract.EventPreToolUse
	EventPostToolUse      = contract.EventPostToolUse
	EventSessionEnd       = contract.EventSessionEnd
	EventContextCompact   = contract.EventContextCompact
)

// EventNames lists every event name in lifecycle order.
func EventNames() []string { return contract.EventNames() }

// IsEvent reports whether name is one of the lifecycle events.
func IsEvent(name string) bool { return contract.IsEvent(name) }
