package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/internal/filelock"
)

// AppendLineNoSync is AppendLine without the fsync: the line is written
// with one write call under the log's lock (a reader or a killed process
// still sees whole lines only, and a torn tail is cut off by the next
// append), but a power loss may lose the latest lines. It is for the tool
// log, appended on every tool call, where an fsync would be most of a hook's
// cost and a lost line costs little.
func (s *Store) AppendLineNoSync(ctx context.Context, path string, v any) error {
	line, err := marshalCompact(v)
	if err != nil {
		return fmt.Errorf("encode line for %s: %w", path, err)
	}
	line = append(line, '\n')
	l, err := filelock.Acquire(ctx, path, s.LockTimeout)
	if err != nil {
		return err
	}
	defer l.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if err := cutTornTail(f); err != nil {
		f.Close()
		return fmt.Errorf("repair %s: %w", path, err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}
