package pluginhost

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestFileVersion: a file's version changes with every write, even an
// in-place edit of the same size whose modification time was put back
// (on Linux, where the change time is part of it); the hook server reloads
// manifests and steps down for another build on a changed version.
func TestFileVersion(t *testing.T) {
	p := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(p, []byte("name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	v1 := FileVersion(p)
	time.Sleep(20 * time.Millisecond) // past a coarse timestamp tick
	if err := os.WriteFile(p, []byte("name: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	v2 := FileVersion(p)
	if v1 == "-" || v2 == "-" {
		t.Fatalf("versions %q %q", v1, v2)
	}
	if runtime.GOOS == "linux" && v1 == v2 {
		t.Errorf("same-size edit with its times put back kept the version %q", v1)
	}
	if got := FileVersion(filepath.Join(t.TempDir(), "missing")); got != "-" {
		t.Errorf("missing file: %q", got)
	}
	if got := ProgramIdentity(p); got != p+"|"+v2 {
		t.Errorf("ProgramIdentity = %q", got)
	}
}
