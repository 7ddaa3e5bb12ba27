package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// FSLimits bound what DirFS reads: each file's size, each folder's entry
// count, and how many folders deep a name may go.
type FSLimits struct {
	File    int64
	Entries int
	Depth   int
}

// DirFS is os.DirFS for a folder nexus did not write (a distribution found
// in node_modules, a plugin folder): every name is opened beneath dir, so a
// symlink is followed only while it stays inside it; files open without
// blocking and only when regular; fs.ReadFile, fs.ReadDir and fs.WalkDir
// on it stay within lim. dir itself may be a symlink (a package manager's
// link to its store).
func DirFS(dir string, lim FSLimits) fs.FS { return dirFS{dir: dir, lim: lim} }

type dirFS struct {
	dir string
	lim FSLimits
}

var (
	_ fs.ReadFileFS = dirFS{}
	_ fs.ReadDirFS  = dirFS{}
	_ fs.StatFS     = dirFS{}
)

func (d dirFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name != "." && strings.Count(name, "/") >= d.lim.Depth {
		return &TooManyError{Path: d.dir + "/" + name, Limit: d.lim.Depth, What: "levels of folders"}
	}
	return nil
}

// with runs fn with a root on the folder (opened per call: the value
// holds no descriptor, as os.DirFS holds none).
func (d dirFS) with(fn func(*os.Root) error) error {
	r, err := os.OpenRoot(d.dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

func (d dirFS) Open(name string) (fs.File, error) {
	if err := d.check("open", name); err != nil {
		return nil, err
	}
	var out fs.File
	err := d.with(func(r *os.Root) error {
		st, err := r.Stat(name)
		if err != nil {
			return explainIn(r, name, err)
		}
		if st.IsDir() {
			f, err := r.Open(name)
			if err != nil {
				return explainIn(r, name, err)
			}
			out = &boundedDir{File: f, max: d.lim.Entries, path: display(r, name)}
			return nil
		}
		f, st, err := OpenIn(r, name)
		if err != nil {
			return err
		}
		out = &boundedFile{f: f, st: st, r: Reader(f, display(r, name), d.lim.File)}
		return nil
	})
	return out, err
}

func (d dirFS) ReadFile(name string) ([]byte, error) {
	if err := d.check("readfile", name); err != nil {
		return nil, err
	}
	var b []byte
	err := d.with(func(r *os.Root) error {
		var err error
		b, err = ReadIn(r, name, d.lim.File)
		return err
	})
	return b, err
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := d.check("readdir", name); err != nil {
		return nil, err
	}
	var ents []fs.DirEntry
	err := d.with(func(r *os.Root) error {
		var err error
		ents, err = ReadDirIn(r, name, d.lim.Entries)
		return err
	})
	return ents, err
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	if err := d.check("stat", name); err != nil {
		return nil, err
	}
	var st fs.FileInfo
	err := d.with(func(r *os.Root) error {
		var err error
		if st, err = r.Stat(name); err != nil {
			return explainIn(r, name, err)
		}
		return nil
	})
	return st, err
}

// boundedFile reads a regular file through its limit.
type boundedFile struct {
	f  *os.File
	st fs.FileInfo
	r  io.Reader
}

func (b *boundedFile) Stat() (fs.FileInfo, error) { return b.st, nil }
func (b *boundedFile) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *boundedFile) Close() error               { return b.f.Close() }

// boundedDir lists a folder through its entry limit.
type boundedDir struct {
	*os.File
	max, seen int
	path      string
}

func (b *boundedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	all := n <= 0
	if all || n > b.max-b.seen+1 {
		n = b.max - b.seen + 1 // one more tells "exactly max" from "more"
	}
	ents, err := b.File.ReadDir(n)
	b.seen += len(ents)
	if b.seen > b.max {
		return nil, &TooManyError{Path: b.path, Limit: b.max, What: "entries"}
	}
	if all && errors.Is(err, io.EOF) {
		err = nil // ReadDir(0) ends without io.EOF
	}
	return ents, err
}
