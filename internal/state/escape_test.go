package state

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// The escape suite (issue 13): every writer of the store × every place a
// repository (or another local user) can put a symlink leading out of the
// project. It fails on any byte, file or folder that appears outside.

// writer is one way the store writes under .nexus/.
type writer struct {
	name string
	// touches lists the layout folders (relative to the project) the write
	// goes through; a symlink there must refuse it.
	touches []string
	write   func(ctx context.Context, s *Store) error
}

var writers = []writer{
	{"artifact", []string{".nexus", ".nexus/state", ".nexus/state/artifacts"}, func(ctx context.Context, s *Store) error {
		_, err := s.WriteArtifact(ctx, "esc.txt", []byte("x"))
		return err
	}},
	{"artifact in a sub-folder", []string{".nexus", ".nexus/state", ".nexus/state/artifacts", ".nexus/state/artifacts/sub"}, func(ctx context.Context, s *Store) error {
		_, err := s.WriteArtifact(ctx, "sub/esc.txt", []byte("x"))
		return err
	}},
	{"memory file", []string{".nexus", ".nexus/memory", ".nexus/state"}, func(ctx context.Context, s *Store) error {
		_, err := s.WriteMemoryFile(ctx, "empirical-symlink-escape-test.md", []byte("hi\n"))
		return err
	}},
	{"rule", []string{".nexus", ".nexus/rules", ".nexus/state"}, func(ctx context.Context, s *Store) error {
		_, err := s.WriteRule(ctx, "esc.md", []byte("rule\n"))
		return err
	}},
	{"plan.json", []string{".nexus", ".nexus/state"}, func(ctx context.Context, s *Store) error {
		return s.Update(ctx, []string{s.L.PlanPath()}, func(tx *Tx) error {
			tx.PutRaw(s.L.PlanPath(), []byte(`{"id":1,"topic":"t","issues":[],"research_summary":"r","created_at":"2026-01-01T00:00:00Z"}`))
			return nil
		})
	}},
	{"tool log line", []string{".nexus", ".nexus/state", ".nexus/state/nexus"}, func(ctx context.Context, s *Store) error {
		return s.AppendLine(ctx, s.L.ToolLogPath(), map[string]any{"x": 1})
	}},
	{"memory access", []string{".nexus", ".nexus/state", ".nexus/state/nexus"}, func(ctx context.Context, s *Store) error {
		_, err := s.UpsertMemoryAccess(ctx, "empirical-x.md", func(old MemoryAccess, _ bool) MemoryAccess {
			old.Path = "empirical-x.md"
			old.AccessCount++
			old.LastAccessedTS = "2026-01-01T00:00:00Z"
			return old
		})
		return err
	}},
	{"tree and .gitignore", []string{".nexus", ".nexus/state", ".nexus/state/nexus"}, func(ctx context.Context, s *Store) error {
		_, err := s.EnsureTree()
		return err
	}},
}

// placements are the symlinks: each makes one folder of the layout point at
// the outside folder, by absolute or by relative target.
var placements = []string{
	".nexus", ".nexus/state", ".nexus/state/artifacts", ".nexus/state/artifacts/sub",
	".nexus/memory", ".nexus/rules", ".nexus/state/nexus",
}

func TestEscapeSuite(t *testing.T) {
	for _, w := range writers {
		for _, link := range placements {
			for _, relTarget := range []bool{false, true} {
				name := w.name + "/" + link
				if relTarget {
					name += "/relative"
				}
				t.Run(name, func(t *testing.T) {
					s := newStore(t)
					s.V = nil // the suite is about where bytes go, not what they say
					s.LockTimeout = 2 * time.Second
					out := t.TempDir()
					lp := filepath.Join(s.L.Project, link)
					if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
						t.Fatal(err)
					}
					target := out
					if relTarget {
						r, err := filepath.Rel(filepath.Dir(lp), out)
						if err != nil {
							t.Fatal(err)
						}
						target = r
					}
					if err := os.Symlink(target, lp); err != nil {
						t.Fatal(err)
					}
					err := w.write(context.Background(), s)
					assertNothingIn(t, out)
					through := false
					for _, d := range w.touches {
						through = through || d == link
					}
					if !through {
						return // unrelated placement: the write may succeed
					}
					var ee *EscapeError
					if !errors.As(err, &ee) {
						t.Fatalf("write through %s: err = %v, want an EscapeError", link, err)
					}
					if ee.Link != lp {
						t.Errorf("the refusal names %q, want the symlink %s: %v", ee.Link, lp, err)
					}
				})
			}
		}
	}
}

// TestEscapeSuiteLockAndLeafLinks: symlinks planted where a file goes (a
// lock file, the state file itself, a dangling link) never make the store
// create or change anything outside.
func TestEscapeSuiteLockAndLeafLinks(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			s := newStore(t)
			s.V = nil
			s.LockTimeout = 2 * time.Second
			out := t.TempDir()
			victim := filepath.Join(out, "victim")
			if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{
				s.L.LockPath(s.L.PlanPath()), s.L.ToolLogPath() + ".lock", s.L.MemoryAccessPath() + ".lock",
				s.L.dirLock("artifacts"), s.L.dirLock("memory"), s.L.dirLock("rules"),
				s.L.PlanPath(), s.L.ToolLogPath(), s.L.MemoryAccessPath(), s.L.GitignorePath(),
				filepath.Join(s.L.ArtifactsDir(), "esc.txt"), filepath.Join(s.L.MemoryDir(), "empirical-symlink-escape-test.md"),
			} {
				os.MkdirAll(filepath.Dir(f), 0o755)
				target := victim
				if strings.HasSuffix(f, ".lock") {
					target = filepath.Join(out, "new-"+filepath.Base(f)) // dangling: O_CREAT would make it
				}
				if err := os.Symlink(target, f); err != nil {
					t.Fatal(err)
				}
			}
			w.write(context.Background(), s)
			entries, _ := os.ReadDir(out)
			if len(entries) != 1 {
				t.Errorf("files appeared outside: %v", names(entries))
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Errorf("the file outside was changed: %q", b)
			}
		})
	}
}

// TestEscapeRace (issue 13.3): another process swaps artifacts/race between
// a real folder and a symlink to the outside with renameat2(RENAME_EXCHANGE)
// while artifacts are written into it. No write, and no temporary file, may
// land outside. Bounded: 300 writes or 3 seconds.
func TestEscapeRace(t *testing.T) {
	s := newStore(t)
	s.V = nil
	out := t.TempDir()
	arts := s.L.ArtifactsDir()
	if err := os.MkdirAll(filepath.Join(arts, "race"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(arts, "swap")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(arts, "race"), unix.AT_FDCWD, filepath.Join(arts, "swap"), unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unavailable here: %v", err)
	}
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if unix.Renameat2(unix.AT_FDCWD, filepath.Join(arts, "race"), unix.AT_FDCWD, filepath.Join(arts, "swap"), unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	var written, refused int
	for i := 0; i < 300 && time.Now().Before(deadline); i++ {
		_, err := s.WriteArtifact(context.Background(), "race/f.txt", []byte("x"))
		var ee *EscapeError
		switch {
		case err == nil:
			written++
		case errors.As(err, &ee):
			refused++
		default:
			// A swap between the folder being created and opened can make
			// it briefly missing or a non-folder: refused either way.
			refused++
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d writes landed inside, %d refused, %d swaps", written, refused, swaps.Load())
	if swaps.Load() < 10 {
		t.Fatalf("only %d swaps happened: the race was not exercised", swaps.Load())
	}
	assertNothingIn(t, out)
}

func assertNothingIn(t *testing.T, dir string) {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Fatalf("written outside the project: %v", found)
	}
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestReadContainedRefusesLinksOut: read-modify-write callers (a rule
// appended to, a memory extended) read through ReadContained, so a file or
// folder linking out is refused and nothing from outside is copied in.
func TestReadContainedRefusesLinksOut(t *testing.T) {
	for _, c := range []struct {
		name string
		link string // relative to the rules folder; "" = the folder itself
	}{{"file", "r.md"}, {"folder", ""}, {"sub-folder", "sub"}} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			out := t.TempDir()
			secret := filepath.Join(out, "secret")
			os.WriteFile(secret, []byte("secret"), 0o644)
			os.WriteFile(filepath.Join(out, "r.md"), []byte("secret"), 0o644)
			rules := s.L.RulesDir()
			name := "r.md"
			switch c.link {
			case "r.md":
				os.MkdirAll(rules, 0o755)
				os.Symlink(secret, filepath.Join(rules, "r.md"))
			case "":
				os.MkdirAll(filepath.Dir(rules), 0o755)
				os.Symlink(out, rules)
			case "sub":
				os.MkdirAll(rules, 0o755)
				os.Symlink(out, filepath.Join(rules, "sub"))
				name = "sub/r.md"
			}
			b, err := s.ReadContained(rules, name)
			var ee *EscapeError
			var re *safefile.EscapeError // the read's own refusal, naming the link
			if !(errors.As(err, &ee) || errors.As(err, &re) && re.Link != "") || len(b) != 0 {
				t.Fatalf("ReadContained = %q, %v; want an EscapeError", b, err)
			}
		})
	}
	s := newStore(t)
	if _, err := s.ReadContained(s.L.RulesDir(), "missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// A symlink that stays inside but names its target by absolute path is
// refused too (os.Root follows only relative links), and the message says
// so rather than claiming the link leads outside.
func TestAbsoluteLinkInsideIsNamedAsSuch(t *testing.T) {
	s := newStore(t)
	real := filepath.Join(s.L.Project, "arts")
	os.MkdirAll(real, 0o755)
	os.MkdirAll(s.L.StateDir(), 0o755)
	if err := os.Symlink(real, s.L.ArtifactsDir()); err != nil {
		t.Fatal(err)
	}
	_, err := s.WriteArtifact(context.Background(), "x.md", []byte("x"))
	var ee *EscapeError
	if !errors.As(err, &ee) || !ee.Absolute || !strings.Contains(err.Error(), "absolute target") {
		t.Fatalf("err = %v, want an EscapeError about the absolute target", err)
	}
	// The same link made relative is followed: it stays in the project.
	os.Remove(s.L.ArtifactsDir())
	if err := os.Symlink("../../arts", s.L.ArtifactsDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteArtifact(context.Background(), "x.md", []byte("x")); err != nil {
		t.Fatalf("relative link inside the project: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(real, "x.md")); err != nil || string(b) != "x" {
		t.Fatalf("not written through the relative link: %q %v", b, err)
	}
}

// RemoveContainedLocked deletes only inside its folder: a sub-folder that
// links elsewhere, even inside the project, is refused.
func TestRemoveContainedStaysInItsFolder(t *testing.T) {
	s := newStore(t)
	mem, rules := s.L.MemoryDir(), s.L.RulesDir()
	os.MkdirAll(mem, 0o755)
	os.MkdirAll(rules, 0o755)
	os.WriteFile(filepath.Join(rules, "keep.md"), []byte("rule"), 0o644)
	os.WriteFile(filepath.Join(mem, "go.md"), []byte("m"), 0o644)
	if err := os.Symlink("../rules", filepath.Join(mem, "sub")); err != nil {
		t.Fatal(err)
	}
	var ee *EscapeError
	if err := s.RemoveContainedLocked(mem, "sub/keep.md"); !errors.As(err, &ee) {
		t.Fatalf("remove through sub -> ../rules: %v, want an EscapeError", err)
	}
	if _, err := os.Stat(filepath.Join(rules, "keep.md")); err != nil {
		t.Fatal("a rule was deleted through the memory folder")
	}
	if err := s.RemoveContainedLocked(mem, "go.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mem, "go.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("go.md not removed")
	}
	if err := s.RemoveContainedLocked(mem, "go.md"); err != nil {
		t.Fatalf("removing a missing file: %v", err)
	}
}
