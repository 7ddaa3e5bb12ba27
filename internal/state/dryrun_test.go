package state

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// tree lists every path beneath dir.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// TestFirstWriteIgnoresState: whichever write comes first (a lock, a log
// line, a state file, a memory file), .nexus/.gitignore exists before it,
// so a command run before any session leaves nothing for git to see; an
// existing .gitignore is left as it is.
func TestFirstWriteIgnoresState(t *testing.T) {
	ctx := context.Background()
	writes := map[string]func(s *Store) error{
		"lock": func(s *Store) error {
			l, err := s.LockDir(ctx, "memory")
			l.Release()
			return err
		},
		"log line": func(s *Store) error { return s.AppendLine(ctx, s.L.LogPath(), map[string]string{"msg": "x"}) },
		"state file": func(s *Store) error {
			return s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *Tx) error { return tx.PutTracker([]TrackerEntry{}) })
		},
		"memory file": func(s *Store) error { _, err := s.WriteMemoryFile(ctx, "empirical-x.md", []byte("x\n")); return err },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			if err := write(s); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(s.L.GitignorePath())
			if err != nil || string(b) != GitignoreContent {
				t.Fatalf(".gitignore = %q, %v", b, err)
			}
		})
	}
	s := newStore(t)
	writeFile(t, s.L.GitignorePath(), "# mine\n")
	if err := writes["lock"](s); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.L.GitignorePath()); string(b) != "# mine\n" {
		t.Errorf("an existing .gitignore was rewritten: %q", b)
	}
}

// TestDryRunWritesNothing: a dry-run store reads what is there and every
// write, removal, lock, log line and folder it is asked for succeeds
// without touching the disk.
func TestDryRunWritesNothing(t *testing.T) {
	ctx := context.Background()
	real := newStore(t)
	writeFile(t, filepath.Join(real.L.HarnessDir(), "session.json"), "{}\n")
	before := tree(t, real.L.Project)
	s := real.DryRun()
	if !s.IsDryRun() || real.IsDryRun() {
		t.Fatal("DryRun must return a new dry store")
	}
	l, err := s.LockDir(ctx, "rules")
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, err := s.WriteContainedLocked(s.L.RulesDir(), "x.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureTree(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLine(ctx, s.L.LogPath(), map[string]string{"msg": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, []string{s.L.PlanPath()}, func(tx *Tx) error {
		return tx.PutPlan(&Plan{SchemaVersion: SchemaVersion, ID: 1, Topic: "t", Issues: []Issue{{ID: 1, Title: "a", Status: IssuePending}}, CreatedAt: s.Timestamp()})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveHarnessFile(ctx, filepath.Join(s.L.HarnessDir(), "session.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertMemoryAccess(ctx, "/x", func(old MemoryAccess, _ bool) MemoryAccess {
		old.Path, old.LastAccessedTS, old.LastAgent, old.AccessCount = "/x", s.Timestamp(), "lead", 1
		return old
	}); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, real.L.Project); len(after) != len(before) {
		t.Errorf("a dry run changed the project: %v, was %v", after, before)
	}
}
