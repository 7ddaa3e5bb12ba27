// Command rawplugin serves the nexus protocol with plain go-plugin and the
// generated gRPC code, without the SDK's Go API: it stands for a plugin
// built outside the SDK (or against another version of it) that does
// go-plugin's own automatic mTLS. Its handshake is written out as
// docs/plugins.md gives it, so a change of the host's handshake fails the
// tests that run it. It lists no events and leaves Configure and
// HandleEvent to the generated Unimplemented server, as a plugin that takes
// no settings and offers only tools may.
package main

import (
	"context"
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/nexus-harness/nexus/plugins/sdk/proto/nexus/plugin/v1"
)

type raw struct {
	pb.UnimplementedPluginServiceServer
}

func (raw) Info(context.Context, *pb.InfoRequest) (*pb.InfoResponse, error) {
	return &pb.InfoResponse{Name: "raw", Version: "1", Tools: []*pb.ToolSpec{{Name: "pid", Description: "Return the process id."}}}, nil
}

func (raw) CallTool(context.Context, *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	return &pb.CallToolResponse{Text: strconv.Itoa(os.Getpid())}, nil
}

// binding registers raw with go-plugin's gRPC server, under the name nexus
// dispenses ("nexus").
type binding struct{ plugin.NetRPCUnsupportedPlugin }

func (binding) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServiceServer(s, raw{})
	return nil
}

func (binding) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil // never a client
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  2,
			MagicCookieKey:   "NEXUS_PLUGIN_MAGIC_COOKIE",
			MagicCookieValue: "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3",
		},
		VersionedPlugins: map[int]plugin.PluginSet{2: {"nexus": binding{}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
