// Package grpcwire is the nexus plugin protocol's gRPC glue, shared by the
// two sides the SDK module holds: the plugin's (pluginserver) and nexus's
// (hostside, and sdktest, which plays nexus in a test). It converts between
// package sdk's values and the generated messages, maps errors to gRPC
// statuses and back, and binds both to hashicorp/go-plugin.
package grpcwire

import (
	"github.com/hashicorp/go-plugin"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Handshake is the go-plugin handshake nexus and its plugins share, a new
// value at every call so that nobody can change it for the others. The
// cookie only stops a plugin from being run by hand by mistake; it is not a
// security measure (the manifest's sha256 and mutual TLS are). Its values
// are part of the wire protocol: changing them breaks every built plugin.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  sdk.ProtocolVersion,
		MagicCookieKey:   "NEXUS_PLUGIN_MAGIC_COOKIE",
		MagicCookieValue: "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3",
	}
}

// PluginName is the name the plugin is dispensed under inside go-plugin's
// plugin set. Each nexus plugin process serves exactly one Plugin.
const PluginName = "nexus"

// The environment through which nexus hands a plugin the TLS identity it
// issued for this start. nexus also sets go-plugin's PLUGIN_CLIENT_CERT
// (its own certificate), so a plugin that ignores these variables falls
// back to go-plugin's automatic mTLS and still works.
const (
	EnvTLSCert = "NEXUS_PLUGIN_TLS_CERT" // PEM certificate the plugin serves with
	EnvTLSKey  = "NEXUS_PLUGIN_TLS_KEY"  // its PEM private key
)

// ServerPlugins is the plugin side's plugin set per protocol version: only
// version 2, gRPC, serving impl.
func ServerPlugins(impl sdk.Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {PluginName: &Plugin{Impl: impl}}}
}

// ClientPlugins is nexus's plugin set: the same, without an implementation.
func ClientPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {PluginName: &Plugin{}}}
}
