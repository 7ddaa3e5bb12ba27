// Package sdktest connects a Plugin implementation to the host's side of the
// nexus plugin protocol inside one test process: every call goes through the
// real gRPC adapters (encoding, deadlines, error mapping) without starting a
// subprocess. Plugin authors use it to test their plugin as nexus sees it.
package sdktest

import (
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Connect serves impl over an in-process gRPC connection and returns the
// host's client for it. The connection is closed when the test ends.
func Connect(t testing.TB, impl sdk.Plugin) sdk.Plugin {
	t.Helper()
	ps := map[string]plugin.Plugin{sdk.PluginName: &sdk.GRPCPlugin{Impl: impl}}
	client, server := plugin.TestPluginGRPCConn(t, false, ps)
	_ = server // stopped by client.Close, through go-plugin's controller
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispense plugin: %v", err)
	}
	p, ok := raw.(sdk.Plugin)
	if !ok {
		t.Fatalf("sdktest: dispensed %T, which is not an sdk.Plugin", raw)
	}
	return p
}
