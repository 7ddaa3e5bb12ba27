package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Moved records one file moved aside by Repair.
type Moved struct {
	Path    string `json:"path"`
	MovedTo string `json:"moved_to"`
	Reason  string `json:"reason"`
}

// Repair checks every JSON state file nexus owns or shares and moves each
// corrupt one (unparsable, or not matching its schema) aside to
// "<name>.corrupt-<timestamp>", so tools can start afresh without the
// evidence being lost. Healthy files are not touched.
func (s *Store) Repair(ctx context.Context) ([]Moved, error) {
	var moved []Moved
	stamp := time.Now().UTC().Format("20060102T150405Z")
	checks := []struct {
		path string
		load func() error
	}{}
	for _, p := range []string{s.L.PlanPath(), s.L.TasksPath(), s.L.HistoryPath(), s.L.TrackerPath()} {
		checks = append(checks, struct {
			path string
			load func() error
		}{p, func() error { _, err := s.CheckFile(p); return err }})
	}
	for _, c := range checks {
		if _, err := os.Lstat(c.path); errors.Is(err, fs.ErrNotExist) {
			continue // nothing to repair, and no lock (nor .nexus/) to create for it
		}
		l, err := s.lockPath(ctx, s.L.LockPath(c.path))
		if err != nil {
			return moved, err
		}
		err = c.load()
		var ce *CorruptError
		if errors.As(err, &ce) {
			dst := c.path + ".corrupt-" + stamp
			if rerr := s.renameFile(c.path, dst); rerr != nil {
				l.Release()
				return moved, fmt.Errorf("move %s aside: %w", c.path, rerr)
			}
			moved = append(moved, Moved{Path: c.path, MovedTo: dst, Reason: ce.Reason})
		}
		l.Release()
		if err != nil && ce == nil {
			return moved, err
		}
	}
	return moved, nil
}

// IsCorruptBackup reports whether name is a file Repair moved aside.
func IsCorruptBackup(name string) bool { return strings.Contains(name, ".corrupt-") }
