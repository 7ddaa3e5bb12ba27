package launch

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/nexus-harness/nexus/plugins/sdk/hostside"
)

// Mutual TLS between nexus and a plugin, issued by nexus at every start.
//
// go-plugin's AutoMTLS has each side generate a P-521 certificate, which
// costs tens of milliseconds per start on both sides. nexus instead issues
// two P-256 certificates (well under a millisecond): its own, announced in
// go-plugin's PLUGIN_CLIENT_CERT, and the plugin's, handed over with its key
// in NEXUS_PLUGIN_TLS_CERT/KEY (the child's environment, readable only by
// the user and removed by the SDK once read). Plugins built without the
// nexus SDK ignore those, answer with go-plugin's own AutoMTLS certificate
// in the handshake, and go-plugin then trusts that one instead: either way
// both ends authenticate each other and nobody else can connect.

// tlsIdentity is one start's pair of certificates.
type tlsIdentity struct {
	client *tls.Config // for nexus's connection
	env    []string    // for the plugin
}

func issueTLS() (*tlsIdentity, error) {
	clientCert, clientPEM, _, err := selfSigned(x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	serverCert, serverPEM, serverKeyPEM, err := selfSigned(x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(serverCert.Leaf)
	return &tlsIdentity{
		client: &tls.Config{
			Certificates: []tls.Certificate{clientCert},
			RootCAs:      roots,
			ServerName:   "localhost",
			MinVersion:   tls.VersionTLS12, // go-plugin's AutoMTLS servers accept 1.2
		},
		env: []string{
			"PLUGIN_CLIENT_CERT=" + string(clientPEM),
			hostside.EnvTLSCert + "=" + string(serverPEM),
			hostside.EnvTLSKey + "=" + string(serverKeyPEM),
		},
	}, nil
}

// selfSigned makes a one-time P-256 certificate for "localhost" that is its
// own CA.
func selfSigned(usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"nexus plugin"}},
		DNSNames:              []string{"localhost"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("issue plugin certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	return cert, certPEM, keyPEM, nil
}
