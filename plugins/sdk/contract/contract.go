// Package contract is the plugin contract without its transport: the
// Plugin interface, the values a plugin and nexus exchange, and the event
// names. Plugins use it through package sdk, which re-exports every name;
// nexus's hook processes use it directly, so that they do not link gRPC.
package contract

import (
	"context"
	"encoding/json"
)

// ProtocolVersion is the go-plugin protocol version nexus speaks (gRPC).
const ProtocolVersion = 2

// Plugin is what a plugin implements. Every method receives the caller's
// context: its deadline and cancellation cross the process boundary.
type Plugin interface {
	// Info describes the plugin: its tools and the events it subscribes to.
	// nexus calls it once after the handshake.
	Info(ctx context.Context) (*Info, error)
	// Configure hands the plugin the settings nexus holds for it. It is
	// called once, after Info and before any other call.
	Configure(ctx context.Context, cfg *Config) error
	// CallTool runs one of the tools listed in Info. Arguments have already
	// been validated by nexus against the tool's InputSchema. A domain
	// failure is a result with IsError set; a returned error means the call
	// itself failed.
	CallTool(ctx context.Context, name string, args json.RawMessage) (*ToolResult, error)
	// HandleEvent receives a lifecycle event the plugin subscribed to. For
	// pre_tool_use the reply may deny the tool call; for every other event
	// the reply's Deny is ignored.
	HandleEvent(ctx context.Context, ev *Event) (*EventReply, error)
}

// Info is a plugin's self-description.
type Info struct {
	Name    string     `json:"name"`
	Version string     `json:"version"`
	Tools   []ToolSpec `json:"tools,omitempty"`
	// Events lists the abstract lifecycle events (session_start,
	// user_message, subagent_spawn, subagent_complete, subagent_resume,
	// pre_tool_use, post_tool_use, session_end, context_compact) the plugin
	// wants to receive.
	Events []string `json:"events,omitempty"`
}

// ToolSpec describes one tool a plugin offers.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // a self-contained JSON Schema object
	Annotations ToolAnnotations `json:"annotations"`
}

// ToolAnnotations are the MCP tool hints. All four are always sent.
type ToolAnnotations struct {
	Title       string `json:"title,omitempty"`
	ReadOnly    bool   `json:"read_only"`
	Destructive bool   `json:"destructive"`
	Idempotent  bool   `json:"idempotent"`
	OpenWorld   bool   `json:"open_world"`
}

// Config is what nexus tells a plugin about where it runs.
type Config struct {
	// ProjectDir is the project root (the folder holding .nexus/). It is
	// sent only to plugins whose manifest sets `project_dir: true`; empty
	// otherwise.
	ProjectDir string `json:"project_dir"`
	// Settings are the plugin's own keys from nexus configuration
	// (plugins.<name>.settings), as strings.
	Settings map[string]string `json:"settings,omitempty"`
	// DataDir is the plugin's own data folder for this project, outside
	// version control (<project>/.nexus/state/<harness-id>/plugins/<name>/),
	// created by nexus (mode 0700) before Configure: keep caches, indexes
	// and anything else the plugin writes there. Empty when nexus has no
	// project (the plugin then keeps nothing).
	DataDir string `json:"data_dir,omitempty"`
}

// ToolResult is the outcome of a tool call. Text is what the MCP client
// sees (usually JSON); Structured, when set, is sent as structuredContent.
type ToolResult struct {
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
}

// Event is a lifecycle event as plugins see it: only what the event itself
// carries, never more of the project.
type Event struct {
	Name      string          `json:"name"`
	SessionID string          `json:"session_id,omitempty"`
	AgentID   string          `json:"agent_id,omitempty"`
	AgentName string          `json:"agent_name,omitempty"`
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	Prompt    string          `json:"prompt,omitempty"`
	// Payload carries any other event fields as a JSON object.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// EventReply is a plugin's answer to an event.
type EventReply struct {
	Deny    bool   `json:"deny,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Context string `json:"context,omitempty"` // extra context for the agent, optional
}

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
