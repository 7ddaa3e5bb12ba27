// Package pluginserver runs a program as a nexus plugin: Serve speaks the
// plugin protocol (hashicorp/go-plugin, gRPC, mutual TLS with the identity
// nexus issues) on behalf of an sdk.Plugin.
package pluginserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"

	"github.com/hashicorp/go-plugin"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/internal/grpcwire"
)

// Serve runs impl as a nexus plugin. Call it from the plugin's main; it
// returns only when nexus shuts the plugin down. Run by hand (outside nexus)
// the program prints a notice and exits with status 1.
//
// Anything the plugin writes to stdout or stderr after Serve starts is sent
// to nexus's log, never to the agent (stdout is reserved for the
// handshake): one entry per line, at info unless the line carries a level
// (an hclog JSON line, or a [DEBUG]/[INFO]/[WARN]/[ERROR] prefix). nexus
// logs info and above.
func Serve(impl sdk.Plugin) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  grpcwire.Handshake(),
		VersionedPlugins: grpcwire.ServerPlugins(impl),
		GRPCServer:       plugin.DefaultGRPCServer,
		TLSProvider:      hostIssuedTLS,
	})
}

// hostIssuedTLS is the plugin's TLS configuration when nexus issued its
// certificate: serve with it, and accept only nexus's client certificate.
// Without those variables it returns nil, and go-plugin's automatic mTLS
// (which generates a P-521 key at every start, tens of milliseconds) or no
// TLS applies. The variables are removed from the environment once read,
// so the plugin's own children never see the key.
func hostIssuedTLS() (*tls.Config, error) {
	certPEM, keyPEM, clientPEM := os.Getenv(grpcwire.EnvTLSCert), os.Getenv(grpcwire.EnvTLSKey), os.Getenv("PLUGIN_CLIENT_CERT")
	_ = os.Unsetenv(grpcwire.EnvTLSCert)
	_ = os.Unsetenv(grpcwire.EnvTLSKey)
	if certPEM == "" || keyPEM == "" || clientPEM == "" {
		return nil, nil
	}
	cert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(clientPEM)) {
		return nil, errors.New("PLUGIN_CLIENT_CERT holds no PEM certificate")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS13,
	}, nil
}
