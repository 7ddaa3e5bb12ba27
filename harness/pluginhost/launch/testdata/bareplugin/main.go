// Command bareplugin speaks the plugin protocol as docs/plugins.md describes
// it for another language: no go-plugin on the plugin side, only a gRPC
// server with nexus.plugin.v1.PluginService, the TLS identity nexus issued,
// and the handshake line. With BARE_CONTROLLER=1 it also serves go-plugin's
// plugin.GRPCController (Shutdown ends the process); without it nexus must
// stop it another way, quickly.
//
// Tools: pid (the process id), wait (blocks until its context ends and
// reports how long after the call it was cancelled, on stderr).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/emptypb"

	pb "github.com/nexus-harness/nexus/plugins/sdk/proto/nexus/plugin/v1"
)

type server struct {
	pb.UnimplementedPluginServiceServer
}

func (server) Info(context.Context, *pb.InfoRequest) (*pb.InfoResponse, error) {
	return &pb.InfoResponse{Name: "bare", Version: "1", Tools: []*pb.ToolSpec{
		{Name: "pid", Description: "Return the process id."},
		{Name: "wait", Description: "Wait for the call's context to end."},
	}}, nil
}

func (server) Configure(context.Context, *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return &pb.ConfigureResponse{}, nil
}

func (server) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	switch req.GetName() {
	case "pid":
		return &pb.CallToolResponse{Text: fmt.Sprint(os.Getpid())}, nil
	case "wait":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &pb.CallToolResponse{Text: "unknown tool", IsError: true}, nil
}

// controller is go-plugin's GRPCController, declared by hand: one rpc
// Shutdown(plugin.Empty) returns (plugin.Empty), whose messages have no
// fields (the same bytes as google.protobuf.Empty).
type controller struct{ stop func() }

var controllerDesc = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCController",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Shutdown",
		Handler: func(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(&emptypb.Empty{}); err != nil {
				return nil, err
			}
			go srv.(*controller).stop()
			return &emptypb.Empty{}, nil
		},
	}},
}

func main() {
	// The handshake and the TLS variables as docs/plugins.md gives them.
	if os.Getenv("NEXUS_PLUGIN_MAGIC_COOKIE") != "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3" {
		fmt.Fprintln(os.Stderr, "This program is a nexus plugin; nexus starts it.")
		os.Exit(1)
	}
	if !slices.Contains(strings.Split(os.Getenv("PLUGIN_PROTOCOL_VERSIONS"), ","), "2") {
		fmt.Fprintln(os.Stderr, "bareplugin: nexus does not offer protocol 2")
		os.Exit(1)
	}
	cfg, err := hostIssuedTLS()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareplugin: no TLS identity from nexus:", err)
		os.Exit(1)
	}
	sock := filepath.Join(os.Getenv("PLUGIN_UNIX_SOCKET_DIR"), "bare.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareplugin:", err)
		os.Exit(1)
	}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg.Clone())))
	pb.RegisterPluginServiceServer(s, server{})
	if os.Getenv("BARE_CONTROLLER") == "1" {
		s.RegisterService(&controllerDesc, &controller{stop: s.Stop})
	}
	fmt.Fprintf(os.Stdout, "1|2|unix|%s|grpc|\n", sock)
	fmt.Fprintln(os.Stderr, "bareplugin: serving")
	_ = s.Serve(ln)
}

// hostIssuedTLS serves with the certificate nexus issued
// (NEXUS_PLUGIN_TLS_CERT, NEXUS_PLUGIN_TLS_KEY, removed once read) and
// trusts only nexus's own (PLUGIN_CLIENT_CERT).
func hostIssuedTLS() (*tls.Config, error) {
	certPEM, keyPEM, clientPEM := os.Getenv("NEXUS_PLUGIN_TLS_CERT"), os.Getenv("NEXUS_PLUGIN_TLS_KEY"), os.Getenv("PLUGIN_CLIENT_CERT")
	_ = os.Unsetenv("NEXUS_PLUGIN_TLS_CERT")
	_ = os.Unsetenv("NEXUS_PLUGIN_TLS_KEY")
	if certPEM == "" || keyPEM == "" || clientPEM == "" {
		return nil, errors.New("NEXUS_PLUGIN_TLS_CERT, NEXUS_PLUGIN_TLS_KEY or PLUGIN_CLIENT_CERT is not set")
	}
	cert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(clientPEM)) {
		return nil, errors.New("PLUGIN_CLIENT_CERT holds no PEM certificate")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS13}, nil
}
