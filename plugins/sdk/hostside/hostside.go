// Package hostside is nexus's side of the plugin protocol: the go-plugin
// handshake and plugin set nexus starts a plugin with, and the client that
// turns the started process into an sdk.Plugin.
//
// It is for nexus itself and carries no compatibility promise: it may
// change in any version of the SDK module. Plugins never need it (they
// use package sdk and pluginserver; their tests use sdktest). It lives in
// the SDK module, not in nexus's, so that sdktest and nexus run one and
// the same client: a plugin that passes its sdktest tests meets the code
// nexus runs.
package hostside

import (
	"github.com/hashicorp/go-plugin"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/internal/grpcwire"
)

// Handshake returns the go-plugin handshake of the nexus plugin protocol.
func Handshake() plugin.HandshakeConfig { return grpcwire.Handshake() }

// Plugins returns the plugin set for plugin.ClientConfig.VersionedPlugins:
// protocol version 2 (gRPC) only.
func Plugins() map[int]plugin.PluginSet { return grpcwire.ClientPlugins() }

// Dispense returns the started plugin behind c as an sdk.Plugin. Its calls
// fail with the errors package sdk documents (sdk.ErrUnavailable,
// sdk.ErrUnimplemented, *sdk.RemoteError, context errors).
func Dispense(c plugin.ClientProtocol) (sdk.Plugin, error) { return grpcwire.Dispense(c) }

// The environment variables through which nexus hands a plugin the TLS
// certificate and key it issued for one start (pluginserver reads and
// removes them).
const (
	EnvTLSCert = grpcwire.EnvTLSCert
	EnvTLSKey  = grpcwire.EnvTLSKey
)
