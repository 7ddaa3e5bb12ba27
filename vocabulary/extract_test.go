package vocabulary

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

func TestExtract(t *testing.T) {
	vendored := testenv.CoreDir(t)
	dir := filepath.Join(t.TempDir(), "out")
	n, err := Extract(Builtin(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// Byte for byte, every file (scripts/.gitkeep included), nothing else.
	count := 0
	filepath.WalkDir(vendored, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		count++
		rel, _ := filepath.Rel(vendored, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not extracted byte for byte (%v)", rel, err)
		}
		return nil
	})
	var written int
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, _ error) error {
		if e != nil && !e.IsDir() {
			written++
		}
		return nil
	})
	if n != count || written != count {
		t.Fatalf("reported %d, wrote %d, vendored %d", n, written, count)
	}
	// The extracted copy is a distribution like any other.
	if c, err := LoadManifest(dir); err != nil || c.Version() != BuiltinVersion {
		t.Fatalf("extracted copy: %v", err)
	}

	// A second run refuses, naming the files, and changes nothing.
	manifest := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifest, []byte("edited"), 0o644)
	_, err = Extract(Builtin(), dir, false)
	var ee *ExistsError
	if !errors.As(err, &ee) || len(ee.Files) != count || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second extract: %v", err)
	}
	if b, _ := os.ReadFile(manifest); string(b) != "edited" {
		t.Fatal("a refused extract overwrote a file")
	}
	// --force restores it; no temporary files are left.
	if _, err := Extract(Builtin(), dir, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(manifest); bytes.Equal(b, []byte("edited")) {
		t.Fatal("--force did not replace the file")
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(tmps) > 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
}

// A symbolic link inside DIR cannot send a write outside it.
func TestExtractStaysBeneathDir(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "agents")); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(Builtin(), dir, true); err == nil {
		t.Fatal("extract followed a symbolic link out of DIR")
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Fatalf("files written outside DIR: %v", entries)
	}
}
