package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b.json")
	for _, content := range []string{"first", "second, longer content"} {
		if err := WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file (no temp leftovers)", len(entries))
	}
}

func TestRemoveMissingIsNotAnError(t *testing.T) {
	if err := Remove(filepath.Join(t.TempDir(), "nope")); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileInStaysBeneathRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteFileIn(root, "a/b/c.md", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/b/c.md")); err != nil || string(b) != "x" {
		t.Fatalf("got %q, %v", b, err)
	}
	if err := WriteFileIn(root, "link/escape.md", []byte("x"), 0o644); err == nil {
		t.Fatal("a write through a symlink leaving the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "escape.md")); err == nil {
		t.Fatal("the file was written outside the root")
	}
	if err := RemoveIn(root, "a/b/c.md"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveIn(root, "a/b/c.md"); err != nil {
		t.Fatalf("removing a missing file: %v", err)
	}
}
