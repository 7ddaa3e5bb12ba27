// Package sdk is the public contract between nexus and its out-of-process
// plugins. The host (nexus) and every plugin import it; a plugin imports
// nothing else from nexus.
//
// A plugin is a program that calls Serve with a Plugin implementation. nexus
// launches it with hashicorp/go-plugin, speaks gRPC to it (go-plugin protocol
// version 2, definitions in proto/), asks it for its Info at handshake, exposes
// its tools over MCP and forwards the lifecycle events it subscribed to.
//
// The types are defined in package contract (without gRPC) and re-exported
// here; use them from sdk.
package sdk

import "github.com/nexus-harness/nexus/plugins/sdk/contract"

// ProtocolVersion is the go-plugin protocol version nexus speaks (gRPC).
const ProtocolVersion = contract.ProtocolVersion

// Plugin is what a plugin implements. Every method receives the caller's
// context: its deadline and cancellation cross the process boundary. See
// contract.Plugin for each method.
type Plugin = contract.Plugin

// The values a plugin and nexus exchange; see package contract.
type (
	Info            = contract.Info
	ToolSpec        = contract.ToolSpec
	ToolAnnotations = contract.ToolAnnotations
	Config          = contract.Config
	ToolResult      = contract.ToolResult
	Event           = contract.Event
	EventReply      = contract.EventReply
)
