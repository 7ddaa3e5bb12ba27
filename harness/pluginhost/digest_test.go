package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDigestRefusesEscapingExecutable: a relative executable is
// resolved beneath the plugin's folder, so a symlink (the file itself or a
// folder on its path) that leads outside is refused before anything is
// hashed or run, even when the digest would match.
func TestCheckDigestRefusesEscapingExecutable(t *testing.T) {
	program := []byte("#!/bin/sh\necho hi\n")
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir, out string) string // returns Executable
		escape bool
	}{
		{"plain file", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(dir, "tool"), program)
			return "tool"
		}, false},
		{"symlink inside the folder", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(dir, "real", "tool"), program)
			symlink(t, "real/tool", filepath.Join(dir, "tool"))
			return "tool"
		}, false},
		{"file symlink to outside", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(out, "tool"), program)
			symlink(t, filepath.Join(out, "tool"), filepath.Join(dir, "tool"))
			return "tool"
		}, true},
		{"relative file symlink to outside", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(out, "tool"), program)
			rel, _ := filepath.Rel(dir, filepath.Join(out, "tool"))
			symlink(t, rel, filepath.Join(dir, "tool"))
			return "tool"
		}, true},
		{"folder symlink to outside", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(out, "tool"), program)
			symlink(t, out, filepath.Join(dir, "bin"))
			return "bin/tool"
		}, true},
		{"absolute executable", func(t *testing.T, dir, out string) string {
			write(t, filepath.Join(out, "tool"), program)
			return filepath.Join(out, "tool")
		}, false},
	}
	sum := sha256Hex(program)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, out := t.TempDir(), t.TempDir()
			m := &Manifest{Name: "p", Dir: dir, Path: filepath.Join(dir, ManifestFile), SHA256: sum, Source: SourceUser}
			m.Executable = c.setup(t, dir, out)
			_, err := CheckDigest(m, nil)
			var ce *ContainmentError
			if c.escape {
				if !errors.As(err, &ce) {
					t.Fatalf("CheckDigest = %v, want a ContainmentError", err)
				}
				if !strings.Contains(err.Error(), m.Executable) || !strings.Contains(err.Error(), "leads out of the plugin's folder") {
					t.Errorf("message does not name the executable and the reason: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckDigest = %v, want nil", err)
			}
		})
	}
}

func write(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
