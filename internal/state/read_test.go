package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/safefile"
	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
)

// stateReaders are every way the store reads a file of .nexus/, with the
// file each reads.
var stateReaders = []struct {
	name string
	file func(l Layout) string
	read func(s *Store) error
}{
	{"ReadPlan", Layout.PlanPath, func(s *Store) error { _, _, err := s.ReadPlan(); return err }},
	{"ReadTasks", Layout.TasksPath, func(s *Store) error { _, _, err := s.ReadTasks(); return err }},
	{"PeekTasks", Layout.TasksPath, func(s *Store) error { _, _, err := PeekTasks(s.L); return err }},
	{"PeekTask", Layout.TasksPath, func(s *Store) error { _, err := PeekTask(s.L, 0); return err }},
	{"ReadTracker", Layout.TrackerPath, func(s *Store) error { _, _, err := s.ReadTracker(); return err }},
	{"ReadHistory", Layout.HistoryPath, func(s *Store) error { _, _, err := s.ReadHistory(); return err }},
	{"ReadHistorySince", Layout.HistoryPath, func(s *Store) error {
		_, err := s.ReadHistorySince(HistoryMark{}, func() {}, func([]byte) error { return nil })
		return err
	}},
	{"ReadHistorySince a mark", Layout.HistoryPath, func(s *Store) error {
		_, err := s.ReadHistorySince(HistoryMark{prefix: 20, cycles: 1}, func() {}, func([]byte) error { return nil })
		return err
	}},
	{"CheckFile tasks", Layout.TasksPath, func(s *Store) error { _, err := s.CheckFile(s.L.TasksPath()); return err }},
	{"Update tasks", Layout.TasksPath, func(s *Store) error {
		return s.Update(context.Background(), []string{s.L.TasksPath()}, func(tx *Tx) error { _, _, err := tx.Tasks(); return err })
	}},
	{"ReadLines tool log", Layout.ToolLogPath, func(s *Store) error { _, err := ReadLines(s.L.ToolLogPath()); return err }},
	{"ReadMemoryAccess", Layout.MemoryAccessPath, func(s *Store) error { _, err := ReadMemoryAccess(s.L.MemoryAccessPath()); return err }},
	{"UpsertMemoryAccess", Layout.MemoryAccessPath, func(s *Store) error {
		_, err := s.UpsertMemoryAccess(context.Background(), "x.md", func(old MemoryAccess, _ bool) MemoryAccess { return old })
		return err
	}},
	{"EnsureTree .gitignore", Layout.GitignorePath, func(s *Store) error { _, err := s.EnsureTree(); return err }},
	{"ReadContained rule", func(l Layout) string { return filepath.Join(l.RulesDir(), "r.md") }, func(s *Store) error {
		_, err := s.ReadContained(s.L.RulesDir(), "r.md")
		return err
	}},
	{"Layout.ReadFile session", func(l Layout) string { return filepath.Join(l.HarnessDir(), "session.json") }, func(s *Store) error {
		_, err := s.L.ReadFile(filepath.Join(s.L.HarnessDir(), "session.json"), 0)
		return err
	}},
}

// Every reader refuses, fast and by name, each hostile file a cloned
// repository can put in place of the file it reads.
func TestStateReadersRefuseHostileFiles(t *testing.T) {
	for _, r := range stateReaders {
		for _, k := range sft.Hostile {
			t.Run(r.name+"/"+string(k), func(t *testing.T) {
				s := newStore(t)
				s.L.HarnessID = "nexus"
				os.MkdirAll(s.L.HarnessDir(), 0o755)
				p := r.file(s.L)
				sft.Plant(t, p, k, LimitFor(p), ' ')
				var err error
				sft.Within(t, sft.Deadline, r.name, func() { err = r.read(s) })
				if !sft.Refused(err) {
					t.Fatalf("%s: want a refusal, got %v", k, err)
				}
				if !strings.Contains(err.Error(), filepath.Base(p)) && !strings.Contains(err.Error(), p) {
					t.Errorf("the refusal does not name %s: %v", p, err)
				}
			})
		}
	}
}

// At the limit a file is read (a valid document padded with spaces);
// one byte more is refused.
func TestStateReadLimitBoundaries(t *testing.T) {
	for _, c := range []struct {
		file func(Layout) string
		doc  string
		read func(s *Store) error
	}{
		{Layout.PlanPath, `{"id":1,"topic":"t","issues":[],"created_at":"2026-01-01T00:00:00Z"}`, func(s *Store) error { _, _, err := s.ReadPlan(); return err }},
		{Layout.TasksPath, `{"tasks":[]}`, func(s *Store) error { _, _, err := s.ReadTasks(); return err }},
		{Layout.GitignorePath, "state/\n", func(s *Store) error {
			ok, err := s.EnsureTree()
			if err == nil && !ok {
				return errors.New("state/ not seen as ignored")
			}
			return err
		}},
		{Layout.MemoryAccessPath, "{\"path\":\"/m.md\",\"access_count\":1,\"last_accessed_ts\":\"2026-01-01T00:00:00Z\"}\n", func(s *Store) error {
			_, err := ReadMemoryAccess(s.L.MemoryAccessPath())
			return err
		}},
	} {
		for _, over := range []bool{false, true} {
			s := newStore(t)
			p := c.file(s.L)
			limit := LimitFor(p)
			n := limit
			if over {
				n++
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			b := make([]byte, n)
			copy(b, c.doc)
			for i := len(c.doc); i < len(b); i++ {
				b[i] = ' '
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			err := c.read(s)
			var tl *safefile.TooLargeError
			if over != errors.As(err, &tl) || (!over && err != nil) {
				t.Errorf("%s of %d bytes (limit %d): %v", filepath.Base(p), n, limit, err)
			}
			if over && tl.Limit != limit {
				t.Errorf("%s: the error names the limit %d, want %d", filepath.Base(p), tl.Limit, limit)
			}
		}
	}
}

// A log nexus appends to that is not a regular file is refused, not
// written into (a FIFO would block once its buffer filled).
func TestAppendLineRefusesAFIFO(t *testing.T) {
	s := newStore(t)
	p := s.L.ToolLogPath()
	sft.Plant(t, p, sft.FIFO, 0, 0)
	var err error
	sft.Within(t, sft.Deadline, "AppendLine", func() { err = s.AppendLine(context.Background(), p, map[string]int{"a": 1}) })
	if !sft.Refused(err) {
		t.Fatalf("AppendLine into a FIFO: %v", err)
	}
}

// A log over its read limit is refused before anything is scanned for its
// last line: an 8 GiB sparse tool log a repository ships made every hook
// that logs a tool call take 27 s. At the limit, a log without a newline
// is cut back to nothing and appended to, within the deadline.
func TestAppendLineRefusesALogOverItsLimit(t *testing.T) {
	// "at the limit": a sparse log of exactly the limit ending in a
	// newline (writing 128 MiB would be most of the test's time).
	for _, k := range []sft.Kind{sft.Sparse, sft.OverLimit, "at the limit"} {
		t.Run(string(k), func(t *testing.T) {
			s := newStore(t)
			p := s.L.ToolLogPath()
			if k == "at the limit" {
				sft.Plant(t, p, sft.AtLimit, 0, 0)
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteAt([]byte("\n"), MaxToolLogBytes-1)
					f.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
			} else {
				sft.Plant(t, p, k, MaxToolLogBytes, 'x')
			}
			var err error
			sft.Within(t, sft.Deadline, "AppendLineNoSync", func() { err = s.AppendLineNoSync(context.Background(), p, map[string]int{"a": 1}) })
			st, serr := os.Stat(p)
			if serr != nil {
				t.Fatal(serr)
			}
			if k == "at the limit" {
				if err != nil || st.Size() != MaxToolLogBytes+int64(len("{\"a\":1}\n")) {
					t.Fatalf("append to a log at its limit: %v; the log is now %d bytes", err, st.Size())
				}
				return
			}
			var tl *safefile.TooLargeError
			if !errors.As(err, &tl) || tl.Limit != MaxToolLogBytes {
				t.Fatalf("append to a log over its limit: %v", err)
			}
			if st.Size() <= MaxToolLogBytes {
				t.Errorf("the refused log was changed: %d bytes", st.Size())
			}
		})
	}
}

// Branch reads .git/HEAD through a limit and never blocks on it.
func TestBranchOfAHostileHead(t *testing.T) {
	for _, k := range []sft.Kind{sft.DevZero, sft.FIFO, sft.Sparse, sft.Folder} {
		dir := t.TempDir()
		sft.Plant(t, filepath.Join(dir, ".git", "HEAD"), k, MaxGitFileBytes, 'x')
		var b string
		sft.Within(t, sft.Deadline, "Branch", func() { b = Branch(dir) })
		if b != "unknown" {
			t.Errorf("%s: branch %q", k, b)
		}
	}
}
