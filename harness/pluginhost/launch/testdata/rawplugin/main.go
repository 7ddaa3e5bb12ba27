// Command rawplugin serves the nexus protocol with plain go-plugin, without
// sdk.Serve: it stands for a plugin built outside the SDK (or in another
// language) that does go-plugin's own automatic mTLS.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

type raw struct{}

func (raw) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "raw", Version: "1", Tools: []sdk.ToolSpec{{Name: "pid", Description: "Return the process id."}}}, nil
}
func (raw) Configure(context.Context, *sdk.Config) error { return nil }
func (raw) CallTool(context.Context, string, json.RawMessage) (*sdk.ToolResult, error) {
	return &sdk.ToolResult{Text: strconv.Itoa(os.Getpid())}, nil
}
func (raw) HandleEvent(context.Context, *sdk.Event) (*sdk.EventReply, error) {
	return &sdk.EventReply{}, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.VersionedPlugins(raw{}),
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
