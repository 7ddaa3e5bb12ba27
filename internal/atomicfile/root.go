package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
)

// WriteFileIn is WriteFile for a file beneath root (name is slash-separated
// and relative to it): every open, mkdir and rename resolves inside root,
// so a symlink planted in the tree cannot send the write elsewhere.
func WriteFileIn(root *os.Root, name string, data []byte, perm os.FileMode) error {
	dir := path.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmpName := path.Join(dir, "."+path.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			root.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmpName, err)
	}
	if err := root.Rename(tmpName, name); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmpName, name, err)
	}
	committed = true
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	return d.Sync()
}

// RemoveIn deletes name beneath root (missing is not an error) and fsyncs
// its directory.
func RemoveIn(root *os.Root, name string) error {
	if err := root.Remove(name); err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("remove %s: %w", name, err)
	}
	d, err := root.Open(path.Dir(name))
	if err != nil {
		return nil
	}
	defer d.Close()
	return d.Sync()
}
