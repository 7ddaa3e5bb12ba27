package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// TokenFile returns where the HTTP bearer token lives: configured (config
// mcp.token_file) when set, else <user config dir>/nexus/mcp-token.
func TokenFile(configured string) (string, error) {
	if configured != "" {
		return filepath.Abs(configured)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory for the MCP token (set mcp.token_file): %w", err)
	}
	return filepath.Join(dir, "nexus", "mcp-token"), nil
}

// LoadOrCreateToken returns the token stored at path, generating one (32
// random bytes, hex) with mode 0600 on first use. A token file readable by
// others is tightened to 0600.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	tok, err := readToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if tok, err = NewToken(); err != nil {
		return "", false, err
	}
	// Write a private temp file, then hard-link it into place: the link
	// fails if the file appeared meanwhile, so when two servers start at
	// once one token wins and nobody ever reads a half-written file.
	f, err := os.CreateTemp(filepath.Dir(path), ".mcp-token-*")
	if err != nil {
		return "", false, fmt.Errorf("create MCP token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.WriteString(tok + "\n")
	if werr == nil {
		werr = f.Chmod(0o600)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", false, fmt.Errorf("write MCP token file %s: %w", path, werr)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			tok, err = readToken(path)
			return tok, false, err
		}
		return "", false, fmt.Errorf("install MCP token file %s: %w", path, err)
	}
	return tok, true, nil
}

// NewToken returns a fresh token: 32 random bytes from crypto/rand, hex.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// maxTokenFile bounds the token file nexus reads back.
const maxTokenFile = 64 << 10

func readToken(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("MCP token file %s is readable by others and cannot be restricted: %w", path, err)
		}
	}
	// A token is a line; the file is the user's, still never a FIFO.
	b, err := safefile.ReadFile(path, maxTokenFile)
	if err != nil {
		return "", fmt.Errorf("read MCP token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("MCP token file %s holds no usable token (at least 16 characters); delete it and a new one is generated", path)
	}
	return tok, nil
}
