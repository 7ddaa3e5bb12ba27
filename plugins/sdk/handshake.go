package sdk

import (
	"github.com/hashicorp/go-plugin"
)

// Handshake is the go-plugin handshake nexus and its plugins share. The
// cookie only stops a plugin from being run by hand by mistake; it is not a
// security measure (see the manifest's sha256 and mutual TLS for that).
// Its values must never change: doing so breaks every built plugin.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "NEXUS_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3",
}

// PluginName is the name the plugin is dispensed under inside go-plugin's
// plugin set. Each nexus plugin process serves exactly one Plugin.
const PluginName = "nexus"

// VersionedPlugins is the plugin set per protocol version: only version 2,
// gRPC. The host passes a nil impl; a plugin passes its implementation.
func VersionedPlugins(impl Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl}},
	}
}
