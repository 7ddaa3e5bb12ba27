package pluginhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".nexus", "state", "nexus", "plugins")
	dir, err := DataDir(root, "hello")
	if err != nil || dir != filepath.Join(root, "hello") {
		t.Fatalf("DataDir = %q, %v", dir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v %v", st, err)
	}
	if again, err := DataDir(root, "hello"); err != nil || again != dir {
		t.Fatalf("second call: %q %v", again, err)
	}
	// A symlink in its place (a repository could commit one) is refused.
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := DataDir(root, "evil"); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Fatalf("symlink: %v", err)
	}
	if _, err := DataDir(root, "../up"); err == nil {
		t.Fatal("a name with a path was accepted")
	}
	if d, err := DataDir("", "hello"); d != "" || err != nil {
		t.Fatalf("no root: %q %v", d, err)
	}
}

// A data root reached through a symlink that leads out of the anchor (a
// repository shipping .nexus/state as a link) is refused, and nothing is
// created outside.
func TestDataDirBeneathRefusesLinksOut(t *testing.T) {
	proj, out := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(proj, ".nexus", "state")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(proj, ".nexus", "state", "nexus", "plugins")
	if _, err := DataDirBeneath(proj, root, "hello"); err == nil {
		t.Fatal("the data folder was made through a symlink out of the project")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("created outside: %v", entries)
	}
	os.Remove(filepath.Join(proj, ".nexus", "state"))
	dir, err := DataDirBeneath(proj, root, "hello")
	if err != nil || dir != filepath.Join(root, "hello") {
		t.Fatalf("DataDirBeneath = %q, %v", dir, err)
	}
}
