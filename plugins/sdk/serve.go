package sdk

import (
	"github.com/hashicorp/go-plugin"
)

// Serve runs impl as a nexus plugin. Call it from the plugin's main; it
// returns only when nexus shuts the plugin down. Run by hand (outside nexus)
// the program prints a notice and exits with status 1.
//
// Anything the plugin writes to stdout or stderr after Serve starts is sent
// to nexus's log, never to the agent: stdout is reserved for the handshake.
func Serve(impl Plugin) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: VersionedPlugins(impl),
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
