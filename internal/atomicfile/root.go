package atomicfile

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
)

// The *In functions do what their path-based twins do, but every name is
// resolved beneath an *os.Root: a symlink (or "..") anywhere on the way that
// leads out of the root fails the operation instead of being followed, and
// there is no window between a check and the use. The file's directory is
// opened once, as a root of its own, and the temporary file, the rename and
// the directory fsync all go through that one handle, so swapping the
// directory for a symlink half-way cannot send any of them elsewhere. Names
// use forward slashes.

// WriteFileIn writes name beneath root atomically (temporary file in the
// same directory, fsync, rename, directory fsync). Missing parent
// directories are created with mode 0755.
func WriteFileIn(root *os.Root, name string, data []byte, perm os.FileMode) error {
	return writeAt(root, name, data, perm, true)
}

// WriteFileInNoSync is WriteFileIn without the two fsyncs (see
// WriteFileNoSync).
func WriteFileInNoSync(root *os.Root, name string, data []byte, perm os.FileMode) error {
	return writeAt(root, name, data, perm, false)
}

// OpenDirIn creates (when missing) and opens the directory dir beneath
// root as a root of its own. dir "" or "." is root itself, returned as a
// fresh handle.
func OpenDirIn(root *os.Root, dir string) (*os.Root, error) {
	if dir == "" {
		dir = "."
	}
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	d, err := root.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", dir, err)
	}
	return d, nil
}

func writeAt(root *os.Root, name string, data []byte, perm os.FileMode, durable bool) error {
	dirName, base := path.Split(name)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("write %s: not a file name", name)
	}
	dir, err := OpenDirIn(root, path.Clean(dirName))
	if err != nil {
		return err
	}
	defer dir.Close()
	tmpName, tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			dir.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmpName, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", tmpName, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmpName, err)
	}
	// rename(2) replaces base itself when it is a symlink; it never writes
	// through one.
	if err := dir.Rename(tmpName, base); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmpName, name, err)
	}
	committed = true
	if !durable {
		return nil
	}
	return syncRoot(dir, name)
}

// createTemp makes "."+base+".tmp-<digits>" exclusively in dir (the name
// pattern doctor recognises as a leftover of a killed writer).
func createTemp(dir *os.Root, base string) (string, *os.File, error) {
	for range 100 {
		var b [4]byte
		rand.Read(b[:])
		name := "." + base + ".tmp-" + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[:])), 10)
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, fmt.Errorf("no free temporary name beside %s", base)
}

// RemoveIn deletes name beneath root (a missing file is not an error) and
// fsyncs its directory.
func RemoveIn(root *os.Root, name string) error {
	dirName, base := path.Split(name)
	dir, err := root.OpenRoot(path.Clean(dirName + "."))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("open directory of %s: %w", name, err)
	}
	defer dir.Close()
	if err := dir.Remove(base); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return syncRoot(dir, name)
}

func syncRoot(dir *os.Root, name string) error {
	d, err := dir.Open(".")
	if err != nil {
		return fmt.Errorf("open the directory of %s: %w", name, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync the directory of %s: %w", name, err)
	}
	return nil
}
