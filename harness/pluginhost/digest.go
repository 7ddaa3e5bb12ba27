package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// DigestError refuses a plugin whose executable is not the one its manifest
// names.
type DigestError struct {
	Plugin     string
	Executable string
	Manifest   string
	Expected   string
	Actual     string
}

func (e *DigestError) Error() string {
	where := e.Manifest
	if where == "" {
		where = "its declaration"
	}
	return fmt.Sprintf("plugin %s refused: %s has sha256 %s but %s expects %s; "+
		"if you built or updated the plugin yourself, put the new digest in the manifest's sha256 field",
		e.Plugin, e.Executable, e.Actual, where, e.Expected)
}

// FileSHA256 returns the lower-case hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckDigest is the go-plugin SecureConfig check, done by nexus so that a
// refusal can name both digests. It runs before every start; cache (nil:
// always hash) skips re-hashing an unchanged file.
func CheckDigest(m *Manifest, cache *Digests) (string, error) {
	exe := m.ExecutablePath()
	if m.SHA256 == "" && m.Source == SourceBuiltin {
		return "", nil // a program nexus ships and starts itself
	}
	actual, err := cache.Digest(exe)
	if err != nil {
		return "", fmt.Errorf("plugin %s: executable: %w", m.Name, err)
	}
	if actual != m.SHA256 {
		return actual, &DigestError{Plugin: m.Name, Executable: exe, Manifest: m.Path, Expected: m.SHA256, Actual: actual}
	}
	return actual, nil
}
