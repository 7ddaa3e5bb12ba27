package pluginhost

import (
	"context"
	"encoding/json"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Backend runs the plugin processes of a Manager: package launch in the
// plugin host program (and in tests), a pipe to that program everywhere
// else. The Manager has already resolved names and checked arguments.
type Backend interface {
	// Tools starts every plugin that declares tools and returns the tools
	// both declared and described, in plugin then manifest order.
	Tools(ctx context.Context) ([]Tool, error)
	// CallTool runs a declared tool, bounded by ref.Timeout and ctx.
	CallTool(ctx context.Context, ref ToolRef, args json.RawMessage) (*sdk.ToolResult, error)
	// Dispatch sends ev to subs, in that order, under the failure
	// policies (see Manager.Dispatch).
	Dispatch(ctx context.Context, ev *sdk.Event, subs []Subscriber) *DispatchResult
	// Verify starts a separate process of a plugin, checks it end to end
	// and stops it.
	Verify(ctx context.Context, name string) (*VerifyReport, error)
	// Runtime says what a plugin's process is doing now.
	Runtime(name string) Runtime
	// Close stops every plugin and waits for them to exit.
	Close() error
}

// BackendFactory makes the Backend of a Manager on first need.
type BackendFactory func(m *Manager) (Backend, error)

// Runtime is a plugin's process state.
type Runtime struct {
	State     State  `json:"state"`
	PID       int    `json:"pid,omitempty"`
	Restarts  int    `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
}
