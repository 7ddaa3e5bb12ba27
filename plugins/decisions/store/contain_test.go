package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/bm25"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

func decisionDoc(n int, title string) string {
	return fmt.Sprintf("---\ndate: 2026-04-16\nconfidence: high\n---\n\n# %03d \u2014 %s\n\n## Decision\n\nRationale text for %s.\n", n, title, title)
}

// assertEmpty fails when anything was written into dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			t.Errorf("written outside the store: %s", p)
		}
		return nil
	})
}

// A decisions/ or snapshots/ folder that is a symlink out of the store
// refuses every write with a message naming it; nothing lands outside.
func TestSymlinkedFolderRefusesWrites(t *testing.T) {
	for _, sub := range []string{kernel.DecisionsDir, kernel.SnapshotsDir} {
		t.Run(sub, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			if err := os.Symlink(outside, filepath.Join(dir, sub)); err != nil {
				t.Fatal(err)
			}
			fs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			var werr error
			if sub == kernel.DecisionsDir {
				werr = fs.WriteFile(context.Background(), "decisions/002-b.md", decisionDoc(2, "Escape"))
				if _, lerr := fs.DecisionWriteLock(context.Background()); lerr == nil {
					t.Error("decisions/.lock was taken through the symlink")
				}
				if _, cerr := fs.Corpus(); cerr == nil || !strings.Contains(cerr.Error(), "symlink") {
					t.Errorf("Corpus = %v, want an error naming the symlink", cerr)
				}
			} else {
				_, werr = fs.Capture(context.Background(), "test", "", time.Now())
			}
			if !errors.Is(werr, ErrOutsideStore) || !strings.Contains(werr.Error(), sub+" is a symlink") {
				t.Errorf("write = %v, want ErrOutsideStore naming %s", werr, sub)
			}
			assertEmpty(t, outside)
		})
	}
}

// A decision file that links out of the store is refused and reported by
// every reader (list, check, search through the corpus; show through
// GetDecision); a symlink that stays inside the store is read.
func TestDecisionSymlinkOneRule(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte(decisionDoc(3, "Secret plan")), 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "decisions", "003-secret.md"))
	os.WriteFile(filepath.Join(dir, "inside.md"), []byte(decisionDoc(4, "Inside link")), 0o644)
	os.Symlink("../inside.md", filepath.Join(dir, "decisions", "004-inside.md"))
	os.WriteFile(filepath.Join(dir, "decisions", "005-broken.md"), []byte("no frontmatter"), 0o644)
	fs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	c, err := fs.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) != 1 || c.Entries[0].D.Title != "Inside link" {
		t.Fatalf("entries = %+v", c.Entries)
	}
	if len(c.Problems) != 2 || c.Problems[0].File != "decisions/003-secret.md" || !strings.Contains(c.Problems[0].Reason, "outside the store") ||
		c.Problems[1].File != "decisions/005-broken.md" {
		t.Fatalf("problems = %+v", c.Problems)
	}
	res, err := kernel.CheckWithProblems(c, "secret plan", "")
	if err != nil || len(res.Related) != 0 || !strings.Contains(kernel.RenderCheck(res), "decisions/003-secret.md") {
		t.Errorf("check = %+v %v: the refused file must be reported, its text never shown", res, err)
	}
	if strings.Contains(kernel.RenderCheck(res), "Rationale text for Secret") {
		t.Error("text of a file outside the store leaked")
	}
	shown, err := kernel.GetDecision(fs, 3, "full")
	if err != nil || !strings.Contains(shown, "cannot be read") || !strings.Contains(shown, "outside the store") {
		t.Errorf("show = %q, %v", shown, err)
	}
	if _, ok, err := fs.ReadFile("decisions/003-secret.md"); ok || err == nil {
		t.Error("ReadFile followed a symlink out of the store")
	}
}

// The cache re-reads exactly the files that changed, and the persistent
// index lets a new process skip unchanged files but never trusts a record
// whose file changed.
func TestCacheAndPersistentIndex(t *testing.T) {
	t.Setenv("NEXUS_DECISIONS_INDEX_DIR", t.TempDir())
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	for i := 1; i <= 5; i++ {
		os.WriteFile(filepath.Join(dir, "decisions", fmt.Sprintf("%03d-d.md", i)), []byte(decisionDoc(i, fmt.Sprintf("Title %d", i))), 0o644)
	}
	old := time.Now().Add(-time.Hour) // outside the racy window
	for i := 1; i <= 5; i++ {
		os.Chtimes(filepath.Join(dir, "decisions", fmt.Sprintf("%03d-d.md", i)), old, old)
	}
	fs1, _ := Open(dir)
	c1, err := fs1.Corpus()
	if err != nil || len(c1.Entries) != 5 {
		t.Fatalf("corpus = %+v, %v", c1, err)
	}
	fs1.Close()
	if _, err := os.Stat(indexPath(fs1.Root())); err != nil {
		t.Fatalf("no persistent index: %v", err)
	}

	// A new process: records come from the index (slim decisions), and a
	// file changed behind its back is re-read.
	p3 := filepath.Join(dir, "decisions", "003-d.md")
	os.WriteFile(p3, []byte(decisionDoc(3, "Changed title")), 0o644)
	fs2, _ := Open(dir)
	defer fs2.Close()
	c2, err := fs2.Corpus()
	if err != nil || len(c2.Entries) != 5 {
		t.Fatalf("corpus = %+v, %v", c2, err)
	}
	if c2.Entries[2].D.Title != "Changed title" || c2.Entries[0].D.Title != "Title 1" {
		t.Errorf("titles = %q, %q", c2.Entries[2].D.Title, c2.Entries[0].D.Title)
	}
	full, err := c2.Full(c2.Entries[0])
	if err != nil || !strings.Contains(full.Rationale, "Title 1") {
		t.Errorf("Full = %+v, %v", full, err)
	}
	res, err := kernel.Check(c2, "changed title", "")
	if err != nil || len(res.Related) == 0 || res.Related[0].Num != 3 || !strings.Contains(res.Related[0].RationalePreview, "Changed title") {
		t.Errorf("check = %+v, %v", res, err)
	}

	// One changed file: the corpus changes, the other records are kept.
	p5 := filepath.Join(dir, "decisions", "005-d.md")
	before := fs2.cache.files["001-d.md"]
	os.WriteFile(p5, []byte(decisionDoc(5, "Fifth, edited in place")), 0o644)
	c3, _ := fs2.Corpus()
	if c3 == c2 || c3.Entries[4].D.Title != "Fifth, edited in place" {
		t.Errorf("edit not seen: %q", c3.Entries[4].D.Title)
	}
	if fs2.cache.files["001-d.md"] != before {
		t.Error("an unchanged file was re-read")
	}
	if c4, _ := fs2.Corpus(); c4 != c3 {
		t.Error("corpus rebuilt although nothing changed")
	}
	os.Remove(p5)
	if c5, _ := fs2.Corpus(); len(c5.Entries) != 4 {
		t.Errorf("removal not seen: %d entries", len(c5.Entries))
	}

	// A damaged index is ignored.
	os.WriteFile(indexPath(dir), []byte("garbage"), 0o644)
	if files, _ := loadIndex(dir, bm25.NewVocab()); len(files) != 0 {
		t.Error("a damaged index was trusted")
	}
}

func TestIndexRoundTrip(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	os.WriteFile(filepath.Join(dir, "decisions", "001-a.md"), []byte(decisionDoc(1, "Use the cache")), 0o644)
	os.WriteFile(filepath.Join(dir, "decisions", "002-b.md"), []byte("broken"), 0o644)
	fs, _ := Open(dir)
	defer fs.Close()
	if _, err := fs.Corpus(); err != nil {
		t.Fatal(err)
	}
	data := encodeIndex(fs.Root(), fs.cache.files, fs.cache.vocab, 42)
	got, written, err := decodeIndex(data, fs.Root(), fs.cache.vocab)
	if err != nil || written != 42 || len(got) != 2 {
		t.Fatalf("decode = %v, %d, %v", got, written, err)
	}
	a, b := got["001-a.md"], fs.cache.files["001-a.md"]
	if a.id != b.id || a.hash != b.hash || !reflect.DeepEqual(a.entry.D, b.entry.D) || !reflect.DeepEqual(a.entry.Doc, b.entry.Doc) {
		t.Errorf("record = %+v, want %+v", a, b)
	}
	if got["002-b.md"].problem == "" {
		t.Error("problem record lost")
	}
	if _, _, err := decodeIndex(data, "/another/store", fs.cache.vocab); err == nil {
		t.Error("an index of another store was accepted")
	}
	data[len(data)/2] ^= 0xff
	if _, _, err := decodeIndex(data, fs.Root(), fs.cache.vocab); err == nil {
		t.Error("a corrupted index was accepted")
	}
}

func FuzzDecodeIndex(f *testing.F) {
	f.Add(encodeIndex("/s", map[string]*fileRecord{"x.md": {problem: "p"}}, bm25.NewVocab(), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeIndex(b, "/s", bm25.NewVocab()) // must not panic or allocate without bound
	})
}

// A decision file that stays unreadable (a symlink out of the store is
// re-checked on every call) does not rebuild the corpus on every call.
func TestUnreadableSymlinkDoesNotRebuild(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	os.WriteFile(filepath.Join(dir, "decisions", "001-a.md"), []byte(decisionDoc(1, "First")), 0o644)
	os.WriteFile(filepath.Join(outside, "x.md"), []byte(decisionDoc(2, "Outside")), 0o644)
	os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(dir, "decisions", "002-x.md"))
	fs, _ := Open(dir)
	defer fs.Close()
	c1, err := fs.Corpus()
	if err != nil || len(c1.Problems) != 1 {
		t.Fatalf("corpus = %+v, %v", c1, err)
	}
	if c2, _ := fs.Corpus(); c2 != c1 {
		t.Error("corpus rebuilt although nothing changed")
	}
}

// A repository that ships .nauro as a symlink out of it cannot make
// `nexus decision init` write the repo pointer (or its lock) elsewhere.
func TestRepoConfigSymlinkRefused(t *testing.T) {
	repo, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(repo, RepoConfigDir)); err != nil {
		t.Fatal(err)
	}
	err := WriteRepoConfig(repo, &RepoConfig{Mode: ModeLocal, ID: "01JAZ3K9QW4M8N2P5R7T9V1X3Y", Name: "x"})
	if !errors.Is(err, ErrOutsideStore) || !strings.Contains(err.Error(), ".nauro is a symlink") {
		t.Errorf("WriteRepoConfig = %v, want a refusal naming .nauro", err)
	}
	assertEmpty(t, outside)
}
