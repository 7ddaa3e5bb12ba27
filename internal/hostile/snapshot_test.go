package hostile

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// hashLimit: regular files up to this size are compared by content too
// (state files, git refs and config, agent files); larger ones (the
// sparse giants) by their metadata alone, which ctime makes exact.
const hashLimit = 1 << 20

// entry is what a snapshot keeps of one path. Nothing is opened but
// regular files of at most hashLimit bytes: a FIFO or a device in a
// snapshotted tree is only lstat'ed.
type entry struct {
	mode   fs.FileMode
	size   int64
	mtime  int64 // ns
	ctime  int64 // ns; no user call can set it back
	ino    uint64
	rdev   uint64
	target string // symlink target
	sum    [32]byte
}

func (e entry) same(o entry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime &&
		e.ino == o.ino && e.rdev == o.rdev && e.target == o.target && e.sum == o.sum
}

func (e entry) String() string {
	switch {
	case e.mode&fs.ModeSymlink != 0:
		return "symlink to " + e.target
	case e.mode.IsDir():
		return "folder"
	case e.mode.IsRegular():
		return fmt.Sprintf("file of %d bytes", e.size)
	default:
		return e.mode.Type().String()
	}
}

// snapshot maps a path (slash-separated, relative to the snapshot's
// root) to its entry.
type snapshot map[string]entry

// take walks root without following symlinks. prev, when not nil, lends
// the content hash of files whose inode, size, mtime and ctime did not
// change, so that a snapshot per step costs one walk, not one read of
// every file.
func take(root string, skip func(rel string) bool, prev snapshot) (snapshot, error) {
	s := snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking: the diff shows it
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if skip != nil && rel != "." && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		e := entry{
			mode:  info.Mode(),
			size:  st.Size,
			mtime: st.Mtim.Nano(),
			ctime: st.Ctim.Nano(),
			ino:   st.Ino,
			rdev:  st.Rdev,
		}
		switch {
		case e.mode&fs.ModeSymlink != 0:
			e.target, _ = os.Readlink(p)
		case e.mode.IsRegular() && e.size <= hashLimit:
			if old, ok := prev[rel]; ok && old.ino == e.ino && old.size == e.size && old.mtime == e.mtime && old.ctime == e.ctime {
				e.sum = old.sum
			} else if sum, err := hashFile(p); err == nil {
				e.sum = sum
			}
		}
		s[rel] = e
		return nil
	})
	return s, err
}

// hashFile hashes a regular file, opened without blocking so that a
// path swapped for a FIFO between lstat and open cannot hang the test.
func hashFile(p string) ([32]byte, error) {
	var sum [32]byte
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return sum, fmt.Errorf("%s is no longer a regular file", p)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, hashLimit+1)); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// change is one path that differs between two snapshots.
type change struct {
	path        string
	before, now *entry
}

func (c change) String() string {
	switch {
	case c.before == nil:
		return c.path + " created (" + c.now.String() + ")"
	case c.now == nil:
		return c.path + " removed (was " + c.before.String() + ")"
	case c.before.mode.Type() != c.now.mode.Type() || c.before.target != c.now.target:
		return c.path + " replaced: " + c.before.String() + " → " + c.now.String()
	case c.before.sum != c.now.sum || c.before.size != c.now.size:
		return c.path + " rewritten (" + c.before.String() + " → " + c.now.String() + ")"
	default:
		return c.path + " touched (metadata changed)"
	}
}

// diff lists what changed from a to b, in path order.
func diff(a, b snapshot) []change {
	var out []change
	for p, ea := range a {
		eb, ok := b[p]
		if !ok {
			out = append(out, change{path: p, before: &ea})
		} else if !ea.same(eb) {
			out = append(out, change{path: p, before: &ea, now: &eb})
		}
	}
	for p, eb := range b {
		if _, ok := a[p]; !ok {
			out = append(out, change{path: p, now: &eb})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}
