package launch

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	pluginv1 "github.com/nexus-harness/nexus/plugins/sdk/proto/nexus/plugin/v1"
)

// TestMutualTLSIsEnforced connects to a running plugin's socket the way
// another local process could, and checks that only nexus's certificate
// gets an answer: for a plugin built with the SDK (nexus-issued P-256
// certificates) and for one using plain go-plugin AutoMTLS.
func TestMutualTLSIsEnforced(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	m := openManager(t, Options{},
		plugintest.WriteManifest(t, root, plugintest.Spec{Name: "sdkplugin", Exe: testPluginBinary(t)}),
		plugintest.WriteManifest(t, root, plugintest.Spec{Name: "rawplugin", Exe: buildPlugin(t, "testdata/rawplugin"),
			Tools: "\n  - {name: pid, capability_classes: []}"}),
	)
	issuer := map[string]string{"sdkplugin": "nexus plugin", "rawplugin": "HashiCorp"}
	for _, name := range []string{"sdkplugin", "rawplugin"} {
		t.Run(name, func(t *testing.T) {
			callPID(t, m, name+"_pid")
			p := Of(m).procs[name]
			p.mu.Lock()
			inst := p.inst
			p.mu.Unlock()
			rc := inst.client.ReattachConfig()
			if rc == nil || rc.Addr == nil || rc.Addr.Network() != "unix" {
				t.Fatalf("reattach config %+v", rc)
			}
			addr := "unix://" + rc.Addr.String()

			// Which certificate does the plugin present: the one nexus
			// issued (SDK) or go-plugin's own (AutoMTLS fallback)?
			cfg := inst.tls.Clone()
			cfg.NextProtos = []string{"h2"}
			tc, err := tls.Dial("unix", rc.Addr.String(), cfg)
			if err != nil {
				t.Fatalf("TLS handshake with nexus's configuration: %v", err)
			}
			org := tc.ConnectionState().PeerCertificates[0].Subject.Organization
			tc.Close()
			if len(org) != 1 || org[0] != issuer[name] {
				t.Errorf("plugin presents a certificate of %v, want %q", org, issuer[name])
			}

			noClientCert := inst.tls.Clone()
			noClientCert.Certificates = nil
			wrongServer := inst.tls.Clone()
			wrongServer.RootCAs = nil // trust the system roots only
			tests := []struct {
				name  string
				creds credentials.TransportCredentials
				ok    bool
			}{
				{"plaintext", insecure.NewCredentials(), false},
				{"TLS without a client certificate", credentials.NewTLS(noClientCert), false},
				{"TLS not trusting the plugin's certificate", credentials.NewTLS(wrongServer), false},
				{"nexus's own TLS configuration", credentials.NewTLS(inst.tls.Clone()), true},
			}
			for _, tt := range tests {
				conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(tt.creds))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err = pluginv1.NewPluginServiceClient(conn).Info(ctx, &pluginv1.InfoRequest{})
				cancel()
				conn.Close()
				if (err == nil) != tt.ok {
					t.Errorf("%s: err = %v, want success %v", tt.name, err, tt.ok)
				}
			}
		})
	}
	// The SDK plugin never sees its private key in its environment.
	res, err := m.CallTool(context.Background(), "sdkplugin_env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "NEXUS_PLUGIN_TLS_KEY") || strings.Contains(res.Text, "PRIVATE KEY") {
		t.Error("the plugin's TLS key is still in its environment")
	}
}

func TestIssueTLS(t *testing.T) {
	id, err := issueTLS()
	if err != nil {
		t.Fatal(err)
	}
	if len(id.env) != 3 || id.client.ServerName != "localhost" || len(id.client.Certificates) != 1 {
		t.Fatalf("identity %+v", id)
	}
	for _, e := range id.env {
		if !strings.Contains(e, "-----BEGIN ") {
			t.Errorf("env %q is not PEM", e[:min(len(e), 40)])
		}
	}
	var _ *tls.Config = id.client
}

// TestSDKPluginUnderGoPluginAutoMTLS: a host doing go-plugin's AutoMTLS
// (no nexus-issued certificate) still gets an answer from an SDK plugin.
func TestSDKPluginUnderGoPluginAutoMTLS(t *testing.T) {
	m := openManager(t, Options{GoPluginAutoMTLS: true}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: testPluginBinary(t)}))
	callPID(t, m, "tp_pid")
}
