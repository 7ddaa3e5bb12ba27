// Package safefile reads files a repository (or a plugin folder, a store, a
// distribution) can ship, as hostile input: opened without blocking, only
// when they are regular files, beneath their root, through a size limit.
//
//   - A FIFO cannot hang the open: the file is opened with O_NONBLOCK (and
//     O_NOCTTY), then fstat-checked; a FIFO, a device, a socket or a folder
//     is a *NotRegularError naming the file and what it is. A plain stat
//     beneath the root comes first, so a device is normally refused before
//     it is even opened; the fstat of the descriptor is what decides.
//     O_NONBLOCK has no effect on a regular file, so it is left set.
//   - Nothing is allocated from the file's claimed size: the content is read
//     through a limit + 1 byte reader and a longer file is a *TooLargeError
//     naming the file and the limit. An 8 GiB sparse file costs one read of
//     limit + 1 bytes.
//   - Beneath an *os.Root every path component is resolved by the kernel one
//     step at a time: a symlink is followed only while it stays inside the
//     root, and one that leads out is an *EscapeError naming the symlink.
//
// Directory listings and walks are bounded too (ReadDirIn, WalkIn): a count
// of entries and a depth, and a symlinked folder is never descended into.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TooLargeError refuses a file longer than the limit for its kind.
type TooLargeError struct {
	Path  string // the file
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the limit of %s for this kind of file; nexus reads no more of it "+
		"(if it is yours and meant to be this large, split or shorten it; see docs/security.md, \"Limits\")",
		e.Path, Bytes(e.Limit))
}

// NotRegularError refuses a file that is not a regular file.
type NotRegularError struct {
	Path string // the file
	Kind string // what it is: "a FIFO", "a device", "a socket", "a folder", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; nexus reads only regular files there (replace it with a regular file, or remove it)",
		e.Path, e.Kind)
}

// EscapeError refuses a read that a symlink would take out of its folder.
type EscapeError struct {
	Path   string // the file nexus was reading
	Link   string // the symlink on the way ("" when it could not be named)
	Target string // where Link points
	Root   string // the folder the read must stay in
}

func (e *EscapeError) Error() string {
	if e.Link == "" {
		return fmt.Sprintf("refusing to read %s: the path leads out of %s through a symlink; "+
			"nexus follows symlinks only while they stay inside their folder (see docs/security.md)", e.Path, e.Root)
	}
	return fmt.Sprintf("refusing to read %s: %s is a symlink to %s, outside %s; "+
		"nexus follows symlinks only while they stay inside their folder (replace the symlink with the file itself; see docs/security.md)",
		e.Path, e.Link, e.Target, e.Root)
}

// TooManyError refuses a folder with more entries than its limit, or a
// walk deeper than its limit.
type TooManyError struct {
	Path  string
	Limit int
	What  string // "entries" or "levels of folders"
}

func (e *TooManyError) Error() string {
	return fmt.Sprintf("%s has more than %d %s; nexus stops there (see docs/security.md, \"Limits\")", e.Path, e.Limit, e.What)
}

// Bytes names a byte count the way the limits are documented.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kindOf names a non-regular file mode.
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
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// CheckRegular refuses, with a *NotRegularError naming p, a file that st
// (its stat) says is not a regular file.
func CheckRegular(p string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: p, Kind: kindOf(st.Mode())}
	}
	return nil
}

// display is the path shown in messages for name beneath root.
func display(root *os.Root, name string) string {
	return filepath.Join(root.Name(), filepath.FromSlash(name))
}

// OpenIn opens name (slash-separated, relative) beneath root for reading:
// without blocking, and only if it is a regular file. A missing file is an
// error matching fs.ErrNotExist; a symlink leading out of root an
// *EscapeError.
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return openChecked(display(root, name),
		func() (fs.FileInfo, error) { return root.Stat(name) },
		func() (*os.File, error) { return root.OpenFile(name, os.O_RDONLY|openFlags, 0) },
		func(err error) error { return explainIn(root, name, err) })
}

// ReadIn reads name beneath root, at most limit bytes (see OpenIn).
func ReadIn(root *os.Root, name string, limit int64) ([]byte, error) {
	f, st, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, display(root, name), st.Size(), limit)
}

// Read reads name beneath the folder dir (which is the root: a symlink in
// name is followed only while it stays inside dir). name may be absolute
// when it lies inside dir.
func Read(dir, name string, limit int64) ([]byte, error) {
	rel, err := relTo(dir, name)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, rel), err)
	}
	defer root.Close()
	return ReadIn(root, rel, limit)
}

// ReadPathIn is Read for a path that names a file inside dir the way dir
// names the folder (both absolute, or both relative to the working
// folder): .nexus/nexus.yaml of a project given as "proj".
func ReadPathIn(dir, path string, limit int64) ([]byte, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s is not inside %s", path, dir)
	}
	return Read(dir, rel, limit)
}

// Open opens the file at path by path, following symlinks wherever they
// lead (for files the user chose: a flag, the user's own configuration),
// without blocking and only if it is a regular file.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return openChecked(path,
		func() (fs.FileInfo, error) { return os.Stat(path) },
		func() (*os.File, error) { return os.OpenFile(path, os.O_RDONLY|openFlags, 0) },
		func(err error) error { return err })
}

// openChecked refuses what stat says is not a regular file before opening
// it (opening some devices does things), opens it, and refuses what the
// descriptor's fstat says is not one (the stat and the open are two
// lookups; the fstat is of the very file opened). wrap explains a lookup's
// error.
func openChecked(p string, stat func() (fs.FileInfo, error), open func() (*os.File, error), wrap func(error) error) (*os.File, fs.FileInfo, error) {
	if st, err := stat(); err != nil {
		return nil, nil, wrap(err)
	} else if err := CheckRegular(p, st); err != nil {
		return nil, nil, err
	}
	f, err := open()
	if err != nil {
		return nil, nil, wrap(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", p, err)
	}
	if err := CheckRegular(p, st); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadFile reads the file at path (see Open), at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, st.Size(), limit)
}

// ReadAll reads r to its end, at most limit bytes; p names the file in a
// *TooLargeError. size is the size the file claims: over the limit it is
// refused before anything is read (a sparse giant costs nothing), within
// it a hint for the one allocation; the read itself still stops at
// limit + 1 bytes, whatever the file claimed.
func ReadAll(r io.Reader, p string, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, &TooLargeError{Path: p, Limit: limit}
	}
	var buf bytes.Buffer
	if size > 0 && size <= limit {
		buf.Grow(int(size) + bytes.MinRead) // ReadFrom grows (copying) when less than MinRead is free
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(buf.Len()) > limit {
		return nil, &TooLargeError{Path: p, Limit: limit}
	}
	return buf.Bytes(), nil
}

// Reader returns r limited to limit bytes for a streaming read: reading
// past the limit is a *TooLargeError naming p.
func Reader(r io.Reader, p string, limit int64) io.Reader {
	return &limited{r: r, left: limit, p: p, limit: limit}
}

type limited struct {
	r     io.Reader
	left  int64
	p     string
	limit int64
}

func (l *limited) Read(b []byte) (int, error) {
	if l.left <= 0 {
		// One more byte tells a file of exactly the limit from a longer one.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{Path: l.p, Limit: l.limit}
		}
		return 0, err
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	return n, err
}

// relTo turns name (relative, or absolute inside dir) into a slash name
// beneath dir.
func relTo(dir, name string) (string, error) {
	if !filepath.IsAbs(name) {
		return filepath.ToSlash(name), nil
	}
	r, err := filepath.Rel(dir, name)
	if err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("%s is not inside %s", name, dir)
	}
	return filepath.ToSlash(r), nil
}

// escaped reports whether err is os.Root's refusal of a path that leaves
// the root (the os package exports no sentinel for it).
func escaped(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// explainIn turns os.Root's refusal to leave root into an *EscapeError
// naming the symlink; other errors are wrapped with the file's path.
func explainIn(root *os.Root, name string, err error) error {
	p := display(root, name)
	if errors.Is(err, fs.ErrNotExist) {
		return &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	if !escaped(err) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &fs.PathError{Op: "read", Path: p, Err: pe.Err}
		}
		return fmt.Errorf("read %s: %w", p, err)
	}
	e := &EscapeError{Path: p, Root: root.Name()}
	e.Link, e.Target = FindEscape(root.Name(), p)
	return e
}

// FindEscape names the first symlink on the way from root to file (an
// absolute path beneath root) that leads out of root or has an absolute
// target (which os.Root never follows), and its target; "" when none can
// be named. It only inspects, after os.Root refused: nothing depends on it.
func FindEscape(root, file string) (link, target string) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", ""
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || !filepath.IsLocal(rel) {
		return "", ""
	}
	cur := root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, seg)
		st, err := os.Lstat(cur)
		if err != nil {
			return "", ""
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		t, _ := os.Readlink(cur)
		resolved, err := filepath.EvalSymlinks(cur)
		if err != nil || !Within(realRoot, resolved) || filepath.IsAbs(t) {
			return cur, t
		}
	}
	return "", ""
}

// Within reports whether p is root or inside it (both cleaned, absolute).
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
