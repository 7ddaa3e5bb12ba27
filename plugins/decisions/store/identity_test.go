package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// editInPlace rewrites a file through its inode (same size) and puts its
// access and modification times back, as `touch -d @<old mtime>` does:
// only the change time tells the new version from the old.
func editInPlace(t *testing.T, p, content string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(content)) != st.Size() {
		t.Fatalf("edit changes the size: %d -> %d", st.Size(), len(content))
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(p); !after.ModTime().Equal(st.ModTime()) || after.Size() != st.Size() {
		t.Fatal("the edit left a different size or modification time")
	}
}

func corpusTitle(t *testing.T, f *FS) string {
	t.Helper()
	c, err := f.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) != 1 || len(c.Problems) != 0 {
		t.Fatalf("corpus: %d entries, problems %v", len(c.Entries), c.Problems)
	}
	return c.Entries[0].D.Title
}

// TestSameSizeEditWithTimesPutBack (issue 22): an in-place edit of the
// same size whose modification time was set back is seen by a cold
// process with the persistent index and by a running store, with and
// without the inotify watch.
func TestSameSizeEditWithTimesPutBack(t *testing.T) {
	saved := fullCheckInterval
	fullCheckInterval = 0 // the polling path checks every file on every call
	t.Cleanup(func() { fullCheckInterval = saved })
	for _, tc := range []struct {
		name    string
		cold    bool // a new FS after the edit (the persistent index)
		noWatch bool
	}{
		{"cold process, persistent index", true, false},
		{"running, inotify", false, false},
		{"running, polling", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "decisions", "001-a.md")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(decisionDoc(1, "Use Redis")), 0o644); err != nil {
				t.Fatal(err)
			}
			// An old file: its modification time proves nothing racy.
			old := time.Now().Add(-time.Hour)
			os.Chtimes(p, old, old)
			f, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { f.Close() }()
			f.cache.noWatch = tc.noWatch
			if got := corpusTitle(t, f); got != "Use Redis" {
				t.Fatalf("title %q", got)
			}
			if tc.cold {
				f.Close()
				if _, err := os.Stat(indexPath(f.Root())); err != nil {
					t.Fatalf("no persistent index: %v", err)
				}
			}
			editInPlace(t, p, decisionDoc(1, "Use Mongo"))
			if tc.cold {
				if f, err = Open(dir); err != nil {
					t.Fatal(err)
				}
			}
			if got := corpusTitle(t, f); got != "Use Mongo" {
				t.Errorf("after the edit: title %q, want Use Mongo", got)
			}
		})
	}
}

// TestIndexKeepsChangeTime: the persistent index round-trips every part
// of a file's identity, the change time included.
func TestIndexKeepsChangeTime(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "decisions", "001-a.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(decisionDoc(1, "Use Redis")), 0o644)
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	corpusTitle(t, f)
	rec := f.cache.files["001-a.md"]
	if rec == nil || rec.id.ctime == 0 {
		t.Skip("no change time on this platform")
	}
	files, _ := loadIndex(f.Root(), f.cache.vocab)
	if got := files["001-a.md"]; got == nil || got.id != rec.id {
		t.Fatalf("index record %+v, want identity %+v", got, rec.id)
	}
}
