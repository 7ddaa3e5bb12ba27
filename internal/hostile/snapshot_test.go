package hostile

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// take walks root without following symlinks (one lstat per entry).
// prev, when not nil, lends the content hash of files whose inode, size,
// mtime and ctime did not change, so that a snapshot per step costs one
// walk, not one read of every file. skip leaves out entries (and what is
// below them) by their relative path.
func take(root string, skip func(rel string) bool, prev snapshot) (snapshot, error) {
	w := walker{s: snapshot{}, prev: prev, skip: skip}
	if err := w.add(root, "."); err != nil {
		return nil, err
	}
	return w.s, nil
}

type walker struct {
	s    snapshot
	prev snapshot
	skip func(rel string) bool
}

// add records p (rel beneath the root) and, for a folder, what it holds.
// A path removed while walking is simply absent: the diff shows it.
func (w *walker) add(p, rel string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		if err == syscall.ENOENT {
			return nil
		}
		return &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	e := entry{mode: modeOf(&st), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, rdev: st.Rdev}
	switch {
	case e.mode&fs.ModeSymlink != 0:
		e.target, _ = os.Readlink(p)
	case e.mode.IsRegular() && e.size <= hashLimit:
		if old, ok := w.prev[rel]; ok && old.ino == e.ino && old.size == e.size && old.mtime == e.mtime && old.ctime == e.ctime {
			e.sum = old.sum
		} else if sum, err := hashFile(p); err == nil {
			e.sum = sum
		}
	}
	w.s[rel] = e
	if !e.mode.IsDir() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		r := n
		if rel != "." {
			r = rel + "/" + n
		}
		if w.skip != nil && w.skip(r) {
			continue
		}
		if err := w.add(p+"/"+n, r); err != nil {
			return err
		}
	}
	return nil
}

// modeOf is the fs.FileMode of a stat result (what os.Lstat would say).
func modeOf(st *syscall.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	return m
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
