package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"syscall"
)

// A store can come with a cloned repository, so every file of it is read
// as hostile input: beneath the store's root (a symlink is followed only
// while it stays inside), opened without blocking (a FIFO cannot hang the
// open), only when it is a regular file, and through a limit below; a
// folder is listed through an entry limit and walked through a depth
// limit, never into a symlinked folder. The host has the same rule
// (nexus's internal/safefile); the store keeps its own copy, being a
// plugin that imports nothing of the host's internals for this.
// docs/decisions.md lists the limits.
const (
	// maxDecisionFile bounds a decision file (Nauro's are a few KiB).
	maxDecisionFile = 1 << 20
	// maxStoreFile bounds the store's other files: project.md, the state
	// files and their history, open-questions.md, the hashes file, a
	// snapshot.
	maxStoreFile = 16 << 20
	// maxControlFile bounds $NAURO_HOME/registry.json and a repository's
	// .nauro/config.json.
	maxControlFile = 4 << 20
	// maxIndexFile bounds the persistent index in the user's cache folder.
	maxIndexFile = 1 << 30
	// maxDirEntries bounds a store folder's listing: the benchmark store of
	// 100,000 decisions fits 2.5 times.
	maxDirEntries = 250000
	// maxWalkDepth and maxWalkEntries bound ListMarkdown's walk.
	maxWalkDepth   = 16
	maxWalkEntries = 500000
)

// TooLargeError refuses a store file over its limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the limit of %d bytes for this kind of file; the decision store reads no more of it (shorten or split it)", e.Path, e.Limit)
}

// NotRegularError refuses a store file that is not a regular file.
type NotRegularError struct {
	Path string
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; the decision store reads only regular files (replace or remove it)", e.Path, e.Kind)
}

// TooManyError refuses a folder over the entry limit, or a walk over its
// limits.
type TooManyError struct {
	Path  string
	Limit int
	What  string
}

func (e *TooManyError) Error() string {
	return fmt.Sprintf("%s has more than %d %s; the decision store stops there", e.Path, e.Limit, e.What)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

func regular(p string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: p, Kind: kindOf(st.Mode())}
	}
	return nil
}

// openFlags: no waiting for a FIFO's writer, no controlling terminal.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// readAll reads f (st its stat) through limit; p names it.
func readAll(f *os.File, st fs.FileInfo, p string, limit int64) ([]byte, error) {
	if err := regular(p, st); err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &TooLargeError{Path: p, Limit: limit}
	}
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + 1)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(buf.Len()) > limit {
		return nil, &TooLargeError{Path: p, Limit: limit}
	}
	return buf.Bytes(), nil
}

// readIn reads name beneath r (see above). Errors from os.Root (missing,
// escaping) are returned as they are, for the caller to explain.
func readIn(r *os.Root, name string, limit int64) ([]byte, error) {
	return readChecked(filepath.Join(r.Name(), filepath.FromSlash(name)), limit,
		func() (fs.FileInfo, error) { return r.Stat(name) },
		func() (*os.File, error) { return r.OpenFile(name, openFlags, 0) })
}

// readPath reads a file by path (the user's own: the registry, the index,
// a file named on the command line), following its symlinks, without
// blocking, only when it is a regular file, through limit.
func readPath(p string, limit int64) ([]byte, error) {
	return readChecked(p, limit,
		func() (fs.FileInfo, error) { return os.Stat(p) },
		func() (*os.File, error) { return os.OpenFile(p, openFlags, 0) })
}

// readChecked refuses what stat says is not a regular file before opening
// it, then reads the opened file (whose own fstat decides) through limit.
func readChecked(p string, limit int64, stat func() (fs.FileInfo, error), open func() (*os.File, error)) ([]byte, error) {
	if st, err := stat(); err != nil {
		return nil, err
	} else if err := regular(p, st); err != nil {
		return nil, err
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readAll(f, st, p, limit)
}

// ReadPath is readPath for the decision store's command line: a decision
// file named by the user (nexus decision validate FILE), through the
// decision file limit.
func ReadPath(p string) ([]byte, error) { return readPath(p, maxDecisionFile) }

// readDirIn lists dir beneath r, sorted, through maxDirEntries.
func readDirIn(r *os.Root, dir string) ([]fs.DirEntry, error) {
	d, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(maxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(ents) > maxDirEntries {
		return nil, &TooManyError{Path: filepath.Join(r.Name(), dir), Limit: maxDirEntries, What: "entries"}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}

// walkIn calls fn for every entry below dir beneath r, in lexical order,
// never entering a symlink, within maxWalkDepth and maxWalkEntries (a walk
// over a limit stops with a *TooManyError). fn returns fs.SkipDir to skip
// a folder.
func walkIn(r *os.Root, dir string, fn func(p string, d fs.DirEntry) error) error {
	seen := 0
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if depth > maxWalkDepth {
			return &TooManyError{Path: filepath.Join(r.Name(), dir), Limit: maxWalkDepth, What: "levels of folders"}
		}
		ents, err := readDirIn(r, dir)
		if err != nil {
			return err
		}
		if seen += len(ents); seen > maxWalkEntries {
			return &TooManyError{Path: r.Name(), Limit: maxWalkEntries, What: "entries in all"}
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if err := fn(p, e); err != nil {
				if errors.Is(err, fs.SkipDir) {
					continue
				}
				return err
			}
			if e.IsDir() { // a symlink is never IsDir here
				if err := walk(p, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(dir, 1)
}
