package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

func TestScaffoldGolden(t *testing.T) {
	var f struct {
		Meta struct {
			Now  string `json:"frozen_now_utc"`
			Name string `json:"project_name"`
		} `json:"meta"`
		Files          map[string]*string `json:"files"`
		FilesReference map[string]*string `json:"files_reference"`
	}
	goldens.Load(t, "init_scaffold.json", &f)
	now, err := time.Parse(time.RFC3339Nano, f.Meta.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		mode decision.Frontmatter
		want map[string]*string
	}{{decision.Documented, f.Files}, {decision.Reference, f.FilesReference}} {
		t.Run(string(m.mode), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := Scaffold(dir, f.Meta.Name, now, m.mode); err != nil {
				t.Fatal(err)
			}
			got := map[string]*string{}
			err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || p == dir || strings.HasSuffix(p, ".lock") {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				rel = filepath.ToSlash(rel)
				if d.IsDir() {
					got[rel+"/"] = nil
					return nil
				}
				b, err := os.ReadFile(p)
				s := string(b)
				got[rel] = &s
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(m.want) {
				t.Errorf("scaffold created %v, want %d entries", keysOf(got), len(m.want))
			}
			for p, want := range m.want {
				g, ok := got[p]
				switch {
				case !ok:
					t.Errorf("%s missing", p)
				case want == nil && g != nil, want != nil && (g == nil || *g != *want):
					t.Errorf("%s:\n%v\nwant\n%v", p, deref(g), deref(want))
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<dir>"
	}
	return *s
}

func keysOf(m map[string]*string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestSnapshotsGolden(t *testing.T) {
	var f struct {
		Serialize struct {
			Dict     json.RawMessage `json:"snapshot_dict"`
			FileText string          `json:"file_text"`
		} `json:"serialize_example"`
		Prune []struct {
			ID        string `json:"id"`
			Now       string `json:"now"`
			Snapshots []struct {
				Version   int    `json:"version"`
				Timestamp string `json:"timestamp"`
				Decisions int    `json:"decision_count"`
			} `json:"snapshots"`
			Kept []int `json:"expected_kept_versions"`
		} `json:"prune_cases"`
	}
	goldens.Load(t, "snapshots.json", &f)
	v, err := pyjson.Parse(string(f.Serialize.Dict))
	if err != nil {
		t.Fatal(err)
	}
	text, err := SerializeSnapshot(v.(*pyjson.Object))
	if err != nil || text != f.Serialize.FileText {
		t.Errorf("serialize = %q, %v\nwant %q", text, err, f.Serialize.FileText)
	}
	if len(f.Prune) == 0 {
		t.Fatal("no prune cases")
	}
	for _, pc := range f.Prune {
		t.Run(pc.ID, func(t *testing.T) {
			dir := t.TempDir()
			fs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range pc.Snapshots {
				files := pyjson.NewObject().Set("project.md", "# P\n")
				for i := 0; i < s.Decisions; i++ {
					files.Set(fmt.Sprintf("decisions/%03d-x.md", i+1), "x")
				}
				snap := pyjson.NewObject().Set("schema_version", 1).Set("version", s.Version).Set("timestamp", s.Timestamp).
					Set("trigger", "").Set("trigger_detail", "").Set("token_count", 0).Set("files", files)
				if err := fs.WriteFile(context.Background(), fmt.Sprintf("snapshots/v%03d.json", s.Version), pyjson.File(snap)); err != nil {
					t.Fatal(err)
				}
			}
			now, _ := ParseTimestamp(pc.Now)
			if err := fs.PruneNow(now); err != nil {
				t.Fatal(err)
			}
			metas, err := fs.ListSnapshots()
			if err != nil {
				t.Fatal(err)
			}
			var kept []int
			for _, m := range metas {
				kept = append(kept, m.Version)
			}
			sort.Ints(kept)
			if !reflect.DeepEqual(kept, pc.Kept) {
				t.Errorf("kept %v, want %v", kept, pc.Kept)
			}
		})
	}
}

func TestCaptureAndWeeks(t *testing.T) {
	if got := weekOfYear(time.Date(2026, 4, 23, 0, 0, 0, 0, time.UTC)); got != 16 {
		t.Errorf("week of 2026-04-23 = %d", got)
	}
	if got := weekOfYear(time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)); got != 0 {
		t.Errorf("week of 2026-01-04 (before the first Monday) = %d", got)
	}
	dir := filepath.Join(t.TempDir(), "s")
	now := time.Date(2026, 4, 16, 10, 22, 3, 114512000, time.UTC)
	if err := Scaffold(dir, "Demo", now, decision.Documented); err != nil {
		t.Fatal(err)
	}
	fs, _ := Open(dir)
	for i := 1; i <= 2; i++ {
		v, err := fs.Capture(context.Background(), "decision: x", "", now.Add(time.Duration(i)*time.Minute))
		if err != nil || v != i {
			t.Fatalf("capture %d = %d, %v", i, v, err)
		}
	}
	snap, err := fs.LoadSnapshot(2)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := snap.Get("files")
	keys := files.(*pyjson.Object).Keys()
	want := []string{"open-questions.md", "project.md", "stack.md", "state_current.md", "decisions/001-initial-setup.md"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("snapshot files = %v, want %v", keys, want)
	}
	if ts := strField(snap, "timestamp"); ts != "2026-04-16T10:24:03.114512+00:00" {
		t.Errorf("timestamp = %q", ts)
	}
	if _, err := fs.LoadSnapshot(9); err == nil || err.Error() != "Snapshot v009 not found." {
		t.Errorf("missing snapshot error = %v", err)
	}
}

func TestFSStoreAndCache(t *testing.T) {
	dir := t.TempDir()
	fs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../x.md", "/etc/passwd", "a/../../x"} {
		if err := fs.WriteFile(context.Background(), bad, "x"); !errors.Is(err, ErrOutsideStore) {
			t.Errorf("WriteFile(%q) = %v, want ErrOutsideStore", bad, err)
		}
		if _, ok, _ := fs.ReadFile(bad); ok {
			t.Errorf("ReadFile(%q) escaped", bad)
		}
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "link.md"))
	if _, ok, _ := fs.ReadFile("link.md"); ok {
		t.Error("a symlink out of the store was followed")
	}
	doc := func(n int, title string) string {
		return fmt.Sprintf("---\ndate: 2026-04-16\nconfidence: high\n---\n\n# %03d \u2014 %s\n\n## Decision\n\nRationale text for %s.\n", n, title, title)
	}
	if err := fs.WriteFile(context.Background(), "decisions/002-b.md", doc(2, "Use Redis")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "decisions", "002-b.md.lock")); err != nil {
		t.Errorf("no sidecar lock next to the decision: %v", err)
	}
	c1, err := fs.Corpus()
	if err != nil || len(c1.Entries) != 1 {
		t.Fatalf("corpus = %+v, %v", c1, err)
	}
	if c2, _ := fs.Corpus(); c2 != c1 {
		t.Error("corpus rebuilt although nothing changed")
	}
	// An in-place edit (as the reference writes) must invalidate the cache.
	p := filepath.Join(dir, "decisions", "002-b.md")
	os.WriteFile(p, []byte(doc(2, "Use Valkey")), 0o644)
	past := time.Now().Add(time.Hour)
	os.Chtimes(p, past, past)
	c3, _ := fs.Corpus()
	if c3 == c1 || c3.Entries[0].D.Title != "Use Valkey" {
		t.Errorf("cache not rebuilt after an edit: %+v", c3.Entries[0].D.Title)
	}
	fs.WriteFile(context.Background(), "decisions/001-a.md", doc(1, "First"))
	stems, _ := fs.ListDecisions()
	if !reflect.DeepEqual(stems, []string{"001-a", "002-b"}) {
		t.Errorf("stems = %v", stems)
	}
	res, err := kernel.Check(mustCorpus(t, fs), "valkey", "")
	if err != nil || len(res.Related) != 1 || res.Related[0].Num != 2 {
		t.Errorf("check through the cache = %+v, %v", res, err)
	}
	lock, err := fs.DecisionWriteLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := fs.DecisionWriteLock(ctx); err == nil {
		t.Error("second holder got decisions/.lock")
	}
	lock.Release()
}

func mustCorpus(t *testing.T, fs *FS) *kernel.Corpus {
	c, err := kernel.Decisions(fs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestControlPlane(t *testing.T) {
	now := time.Date(2026, 4, 16, 0, 0, 0, 0, time.UTC)
	id, err := NewULID(now)
	if err != nil || !reULID().MatchString(id) {
		t.Fatalf("ULID %q, %v", id, err)
	}
	if id2, _ := NewULID(now.Add(time.Millisecond)); id2[:10] <= id[:10] {
		t.Errorf("ULID time prefix does not increase: %s then %s", id, id2)
	}
	home := t.TempDir()
	repo := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(filepath.Join(repo, "sub", "deep"), 0o755)
	reg, err := LoadRegistry(home)
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Register("Demo", repo, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Save(); err != nil {
		t.Fatal(err)
	}
	storeDir, _ := reg.StorePath(p.ID)
	if err := Scaffold(storeDir, "Demo", now, decision.Documented); err != nil {
		t.Fatal(err)
	}
	if err := WriteRepoConfig(repo, &RepoConfig{Mode: ModeLocal, ID: p.ID, Name: "Demo"}); err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(Location{Home: home, Cwd: filepath.Join(repo, "sub", "deep")})
	if err != nil || r.ID != p.ID || r.Store.Root() != mustReal(storeDir) {
		t.Fatalf("resolve via repo pointer = %+v, %v", r, err)
	}
	os.Remove(filepath.Join(repo, RepoConfigDir, RepoConfigFile))
	if r, err := Resolve(Location{Home: home, Cwd: filepath.Join(repo, "sub")}); err != nil || r.ID != p.ID {
		t.Errorf("resolve via registry path = %+v, %v", r, err)
	}
	if r, err := Resolve(Location{Home: home, ProjectID: "Demo"}); err != nil || r.ID != p.ID {
		t.Errorf("resolve via name = %+v, %v", r, err)
	}
	if _, err := Resolve(Location{Home: home, Cwd: t.TempDir()}); !errors.Is(err, ErrNoProject) {
		t.Errorf("unknown dir = %v, want ErrNoProject", err)
	}
	reg2, _ := LoadRegistry(home)
	if len(reg2.Projects) != 1 || reg2.Projects[0].Name != "Demo" || reg2.Projects[0].RepoPaths[0] != repo {
		t.Errorf("registry round trip = %+v", reg2.Projects)
	}
	if _, err := reg2.StorePath("../escape"); err == nil {
		t.Error("StorePath accepted an escaping id")
	}
	for _, bad := range []string{`{"schema_version": 2, "mode": "local", "id": "x", "name": "n"}`, `[]`, `{"schema_version": 1, "mode": "local", "id": "` + id + `", "name": ""}`} {
		f := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(f, []byte(bad), 0o644)
		if _, err := ReadRepoConfig(f); err == nil {
			t.Errorf("ReadRepoConfig accepted %s", bad)
		}
	}
	if _, err := ValidProjectName("a/b"); err == nil {
		t.Error("name with a slash accepted")
	}
}

func mustReal(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}
