// Package sdktest connects a Plugin implementation to nexus's side of the
// plugin protocol inside one process: every call goes through the real
// gRPC adapters (encoding, deadlines, cancellation, error mapping), the same
// client nexus runs, without starting a subprocess. Plugin authors use it
// to test their plugin as nexus sees it:
//
//	func TestGreet(t *testing.T) {
//		p := sdktest.Connect(t, greeter{})
//		res, err := p.CallTool(context.Background(), "greet", json.RawMessage(`{"name":"Ada"}`))
//		...
//	}
package sdktest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/internal/grpcwire"
)

// Connect serves impl in this process and returns nexus's client for it.
// The connection is closed when the test ends.
func Connect(t testing.TB, impl sdk.Plugin) sdk.Plugin {
	t.Helper()
	p, closeConn, err := Pipe(impl)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	t.Cleanup(closeConn)
	return p
}

// Pipe is Connect for code without a testing.TB (an Example, a program of
// your own): it serves impl over an in-memory gRPC connection and returns
// nexus's client for it and the function that closes both ends.
func Pipe(impl sdk.Plugin) (p sdk.Plugin, closeConn func(), err error) {
	ln := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	if err := (&grpcwire.Plugin{Impl: impl}).GRPCServer(nil, srv); err != nil {
		return nil, nil, err
	}
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient("passthrough:///sdktest",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	raw, err := (&grpcwire.Plugin{}).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		_ = conn.Close()
		srv.Stop()
		return nil, nil, err
	}
	return raw.(sdk.Plugin), func() { _ = conn.Close(); srv.Stop() }, nil
}
