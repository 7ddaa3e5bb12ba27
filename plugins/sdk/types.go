package sdk

import "encoding/json"

// The values a plugin and nexus exchange. The JSON tags are how nexus
// passes them between its own processes; plugins see them as Go values
// (over the wire they are the messages in proto/nexus/plugin/v1).

// Info is a plugin's self-description.
type Info struct {
	Name    string     `json:"name"`
	Version string     `json:"version"`
	Tools   []ToolSpec `json:"tools,omitempty"`
	// Events lists the lifecycle events the plugin handles. nexus sends
	// an event only to a plugin whose manifest subscribes to it and whose
	// Info lists it.
	Events []EventName `json:"events,omitempty"`
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
	// (plugins.settings.<name>), as strings.
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
	Name      EventName       `json:"name"`
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
