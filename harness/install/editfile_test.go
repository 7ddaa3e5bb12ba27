package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEditFile(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenAnchor(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	o := Options{Now: func() time.Time { return now }}
	set := func(content string, remove bool) func([]byte, bool) ([]byte, bool, []string, error) {
		return func([]byte, bool) ([]byte, bool, []string, error) { return []byte(content), remove, []string{"n"}, nil }
	}
	read := func() (string, bool) {
		b, err := os.ReadFile(filepath.Join(dir, "sub", "f.toml"))
		return string(b), err == nil
	}
	// A dry run of a new file writes nothing.
	ch, err := EditFile(a, "sub/f.toml", 1<<20, Options{DryRun: true}, nil, set("a = 1\n", false))
	if _, ok := read(); err != nil || !ch.Changed || ok || !strings.Contains(ch.Diff, "+a = 1") || ch.Notes[0] != "n" {
		t.Fatalf("dry run: %+v %v", ch, err)
	}
	if ch, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, set("a = 1\n", false)); err != nil || !ch.Changed || ch.Backup != "" {
		t.Fatalf("create: %+v %v", ch, err)
	}
	// The same content is no change; new content keeps a backup.
	if ch, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, set("a = 1\n", false)); err != nil || ch.Changed {
		t.Fatalf("unchanged: %+v %v", ch, err)
	}
	ch, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, set("a = 2\n", false))
	if got, _ := read(); err != nil || !ch.Changed || got != "a = 2\n" || ch.Backup == "" {
		t.Fatalf("update: %+v %v %q", ch, err, got)
	}
	if b, _ := os.ReadFile(ch.Backup); string(b) != "a = 1\n" {
		t.Errorf("backup %q", b)
	}
	// An error from the edit leaves the file alone.
	boom := errors.New("boom")
	if _, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, func([]byte, bool) ([]byte, bool, []string, error) { return nil, true, nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("edit error: %v", err)
	}
	if got, ok := read(); !ok || got != "a = 2\n" {
		t.Fatalf("after a failed edit: %q", got)
	}
	// Removal, then removal of a missing file (no change).
	now = now.Add(time.Second)
	if ch, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, set("", true)); err != nil || !ch.Changed || !ch.Removed {
		t.Fatalf("remove: %+v %v", ch, err)
	}
	if _, ok := read(); ok {
		t.Fatal("not removed")
	}
	if ch, err = EditFile(a, "sub/f.toml", 1<<20, o, nil, set("", true)); err != nil || ch.Changed {
		t.Fatalf("remove again: %+v %v", ch, err)
	}
}
