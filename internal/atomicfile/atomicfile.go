// Package atomicfile replaces files so that a reader, or a process that
// crashes mid-write, only ever sees the old content or the new content.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically: the bytes go to a temporary file
// in the same directory (so the final rename never crosses a file system),
// the temporary file is fsynced, renamed over path, and the directory is
// fsynced so the rename itself survives a power loss. Missing parent
// directories are created with mode 0755.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// WriteFileNoSync is WriteFile without the two fsyncs: readers and a
// process killed mid-write still see the old or the new content (the rename
// is atomic), but a power loss may lose the latest replacement. It is for
// high-rate files whose loss costs little (the memory-access counters),
// where fsync would dominate the cost of every write.
func WriteFileNoSync(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

// write opens path's directory (created when missing) as a root and does
// the root-based write there: one implementation of temp, fsync, rename and
// directory fsync. Symlinks on the way to the directory are followed, as a
// plain path would; the file itself is replaced, never written through.
func write(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer root.Close()
	if err := writeAt(root, filepath.Base(path), data, perm, durable); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Remove deletes path (a missing file is not an error) and fsyncs its
// directory so the deletion is durable.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory so that renames and deletions inside it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
