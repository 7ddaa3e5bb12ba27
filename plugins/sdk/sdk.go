// Package sdk is the contract between nexus and its out-of-process plugins:
// the Plugin interface, the values a plugin and nexus exchange, the
// lifecycle event names and the errors a call can end with. It holds no
// transport: nexus's hook processes import it without linking gRPC.
//
// A plugin implements Plugin, embedding UnimplementedPlugin, and hands it to
// pluginserver.Serve from its main. nexus launches the program with
// hashicorp/go-plugin, speaks gRPC to it (go-plugin protocol version 2,
// definitions in proto/), asks it for its Info, sends it Configure, exposes
// its tools over MCP and forwards the lifecycle events it subscribed to.
// Package sdktest connects a Plugin to nexus's side of the protocol inside
// a test.
//
// # Compatibility
//
// This package, pluginserver and sdktest follow semantic versioning (the
// module is tagged plugins/sdk/vX.Y.Z). A minor version may add methods to
// Plugin; a plugin that embeds UnimplementedPlugin, as it must, keeps
// compiling and gets the documented default for the new method. Package
// hostside is nexus's own and carries no promise. Whatever the SDK version,
// a plugin binary talks to nexus over wire protocol version 2
// (ProtocolVersion), which changes only by adding fields and methods that
// an older peer can ignore.
package sdk

import (
	"context"
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the go-plugin protocol version of the nexus plugin
// protocol (gRPC, the messages in proto/nexus/plugin/v1). A manifest's
// protocol_version must equal it.
const ProtocolVersion = 2

// Plugin is what a plugin implements. Every method receives the caller's
// context: its deadline and cancellation cross the process boundary. Calls
// may arrive concurrently.
//
// Implementations must embed UnimplementedPlugin (by value): it supplies
// every method the plugin leaves out, including methods later SDK versions
// add, so a plugin compiles unchanged against a newer SDK. A plugin writes
// Info and the methods for what it offers: CallTool for tools, HandleEvent
// for event subscriptions, Configure when it takes settings.
type Plugin interface {
	// Info describes the plugin: its tools and the events it subscribes
	// to. nexus calls it once after the handshake.
	Info(ctx context.Context) (*Info, error)
	// Configure hands the plugin the settings nexus holds for it. It is
	// called once, after Info and before any other call.
	Configure(ctx context.Context, cfg *Config) error
	// CallTool runs one of the tools listed in Info. Arguments have already
	// been validated by nexus against the tool's InputSchema. A domain
	// failure is a result with IsError set; a returned error means the call
	// itself failed.
	CallTool(ctx context.Context, name string, args json.RawMessage) (*ToolResult, error)
	// HandleEvent receives a lifecycle event the plugin subscribed to (its
	// manifest's events that Info also lists). For pre_tool_use the reply
	// may deny the tool call; for every other event the reply's Deny is
	// ignored.
	HandleEvent(ctx context.Context, ev *Event) (*EventReply, error)

	mustEmbedUnimplementedPlugin()
}

// UnimplementedPlugin is embedded by every Plugin. Its methods are the
// defaults of what a plugin does not implement: Configure accepts any
// configuration and keeps nothing (every nexus version accepts that
// answer); CallTool and HandleEvent fail with ErrUnimplemented, which nexus
// reports as "the plugin does not implement this call". It has no Info: a
// plugin must describe itself.
type UnimplementedPlugin struct{}

// Configure accepts the configuration and ignores it.
func (UnimplementedPlugin) Configure(context.Context, *Config) error { return nil }

// CallTool fails with ErrUnimplemented.
func (UnimplementedPlugin) CallTool(_ context.Context, name string, _ json.RawMessage) (*ToolResult, error) {
	return nil, fmt.Errorf("tool %q: %w", name, ErrUnimplemented)
}

// HandleEvent fails with ErrUnimplemented.
func (UnimplementedPlugin) HandleEvent(_ context.Context, ev *Event) (*EventReply, error) {
	if ev == nil {
		return nil, ErrUnimplemented
	}
	return nil, fmt.Errorf("event %s: %w", ev.Name, ErrUnimplemented)
}

// mustEmbedUnimplementedPlugin is what makes embedding UnimplementedPlugin
// the only way to implement Plugin; nothing calls it.
//
//lint:ignore U1000 the Plugin interface requires it (see above)
func (UnimplementedPlugin) mustEmbedUnimplementedPlugin() {}
