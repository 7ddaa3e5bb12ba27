package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/internal/safefile"
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
// The file must be a regular file (opened without blocking: a manifest
// naming a FIFO or /dev/zero as its executable is refused, not hashed
// forever) of at most MaxExecutableBytes.
func FileSHA256(path string) (string, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st.Size() > MaxExecutableBytes {
		return "", &safefile.TooLargeError{Path: path, Limit: MaxExecutableBytes}
	}
	h := sha256.New()
	if _, err := io.Copy(h, safefile.Reader(f, path, MaxExecutableBytes)); err != nil {
		var tl *safefile.TooLargeError
		if errors.As(err, &tl) {
			return "", tl
		}
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ContainmentError refuses a plugin whose relative executable resolves,
// through a symlink, to a file outside the plugin's folder.
type ContainmentError struct {
	Plugin     string
	Executable string
	Dir        string
	Err        error
}

func (e *ContainmentError) Error() string {
	return fmt.Sprintf("plugin %s refused: executable %q leads out of the plugin's folder %s (%v); "+
		"put the program itself inside the folder, or name it by absolute path in the manifest",
		e.Plugin, e.Executable, e.Dir, e.Err)
}

func (e *ContainmentError) Unwrap() error { return e.Err }

// CheckContained refuses a relative executable that a symlink (anywhere on
// its path) sends out of the plugin's folder: the manifest's text check sees
// only "bin/tool", not where bin/ or tool point. The path is resolved by
// os.Root, which follows symlinks only while they stay beneath the folder.
// An absolute executable names its file outright and is not checked here.
func CheckContained(m *Manifest) error {
	if filepath.IsAbs(m.Executable) {
		return nil
	}
	root, err := os.OpenRoot(m.Dir)
	if err != nil {
		return fmt.Errorf("plugin %s: open its folder: %w", m.Name, err)
	}
	defer root.Close()
	// A stat resolves the path as an open would, without opening it (a
	// FIFO named as the executable must not hang the check; FileSHA256
	// refuses what is not a regular file).
	if _, err := root.Stat(filepath.FromSlash(m.Executable)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("plugin %s: executable: %w", m.Name, err)
		}
		return &ContainmentError{Plugin: m.Name, Executable: m.Executable, Dir: m.Dir, Err: err}
	}
	return nil
}

// CheckDigest is the go-plugin SecureConfig check, done by nexus so that a
// refusal can name both digests. It runs before every start; cache (nil:
// always hash) skips re-hashing an unchanged file.
func CheckDigest(m *Manifest, cache *Digests) (string, error) {
	exe := m.ExecutablePath()
	if m.SHA256 == "" && m.Source == SourceBuiltin {
		return "", nil // a program nexus ships and starts itself
	}
	if err := CheckContained(m); err != nil {
		return "", err
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
