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

// A destination a symlink or a misplaced file would divert is refused
// before anything is written, naming the entry; a rerun meets the same
// refusal (nothing was half-written), with or without --force.
func TestExtractChecksTheWholeDestinationFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir, outside string) string // returns the entry named
	}{
		{"agents symlinked out", func(t *testing.T, dir, outside string) string {
			os.Symlink(outside, filepath.Join(dir, "agents"))
			return filepath.Join(dir, "agents")
		}},
		{"agents symlinked inside", func(t *testing.T, dir, outside string) string {
			os.Mkdir(filepath.Join(dir, "other"), 0o755)
			os.Symlink("other", filepath.Join(dir, "agents"))
			return filepath.Join(dir, "agents")
		}},
		{"a file symlinked out", func(t *testing.T, dir, outside string) string {
			os.WriteFile(filepath.Join(outside, "m"), []byte("mine"), 0o644)
			os.Symlink(filepath.Join(outside, "m"), filepath.Join(dir, "manifest.json"))
			return filepath.Join(dir, "manifest.json")
		}},
		{"a file where a folder goes", func(t *testing.T, dir, outside string) string {
			os.WriteFile(filepath.Join(dir, "skills"), []byte("x"), 0o644)
			return filepath.Join(dir, "skills")
		}},
		{"a folder where a file goes", func(t *testing.T, dir, outside string) string {
			os.Mkdir(filepath.Join(dir, "manifest.json"), 0o755)
			return filepath.Join(dir, "manifest.json")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			named := tc.plant(t, dir, outside)
			before, _ := os.ReadDir(dir)
			outBefore, _ := os.ReadDir(outside)
			for _, force := range []bool{false, false, true} {
				n, err := Extract(Builtin(), dir, force)
				var de *DestError
				if !errors.As(err, &de) || de.Path != named || !strings.Contains(err.Error(), named) || n != 0 {
					t.Fatalf("force=%v: wrote %d, err %v; want a refusal naming %s", force, n, err, named)
				}
				if after, _ := os.ReadDir(dir); len(after) != len(before) {
					t.Fatalf("force=%v: DIR changed: %v -> %v", force, before, after)
				}
				if after, _ := os.ReadDir(outside); len(after) != len(outBefore) {
					t.Fatalf("force=%v: files written outside DIR: %v", force, after)
				}
			}
		})
	}
}
