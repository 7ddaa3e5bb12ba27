package vocabulary

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ExistsError lists files Extract would have overwritten.
type ExistsError struct {
	Dir   string
	Files []string // slash-separated, relative to Dir
}

func (e *ExistsError) Error() string {
	list := e.Files
	more := ""
	if len(list) > 5 {
		list, more = list[:5], fmt.Sprintf(" and %d more", len(e.Files)-5)
	}
	return fmt.Sprintf("%s already holds %s%s; nothing was written (pass --force to overwrite, or choose an empty folder)", e.Dir, strings.Join(list, ", "), more)
}

// Extract writes every file of d beneath dir (created when missing), byte
// for byte, and returns how many it wrote. Every path is opened through an
// os.Root on dir, so nothing can land outside it, whatever symbolic links
// dir holds. Before writing anything it checks every destination: a
// symlink on the way to a file (DIR/agents -> elsewhere) or in place of
// one, or a file where a folder is needed, is refused naming it; without
// force, so is any file that exists. Without force each file is created
// exclusively; with force, each is replaced atomically (temporary file,
// fsync, rename).
func Extract(d Dist, dir string, force bool) (int, error) {
	var files []string
	err := fs.WalkDir(d.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", d.Where(), err)
	}
	sort.Strings(files)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	// The whole destination is checked before the first write, so a
	// refusal leaves DIR as it was and a rerun meets the same refusal.
	if err := checkDest(root, dir, files, force); err != nil {
		return 0, err
	}
	for i, f := range files {
		data, err := fs.ReadFile(d.FS, f)
		if err != nil {
			return i, fmt.Errorf("read %s: %w", d.File(f), err)
		}
		if err := root.MkdirAll(path.Dir(f), 0o755); err != nil {
			return i, fmt.Errorf("create %s: %w", path.Dir(f), err)
		}
		if force {
			err = replaceBeneath(root, f, data)
		} else {
			err = createBeneath(root, f, data)
		}
		if err != nil {
			return i, err
		}
	}
	return len(files), nil
}

// DestError refuses a destination Extract will not write through.
type DestError struct {
	Path   string // the entry in the way, absolute
	Reason string
}

func (e *DestError) Error() string {
	return fmt.Sprintf("%s %s; nothing was written (remove it, or choose another folder)", e.Path, e.Reason)
}

// checkDest refuses, before anything is written, a destination that a
// symlink or a non-folder would divert, and (without force) one that
// already holds any of the files.
func checkDest(root *os.Root, dir string, files []string, force bool) error {
	var exist []string
	checked := map[string]bool{}
	for _, f := range files {
		parts := strings.Split(f, "/")
		for i := range parts {
			name := strings.Join(parts[:i+1], "/")
			leaf := i == len(parts)-1
			if checked[name] {
				continue
			}
			checked[name] = true
			st, err := root.Lstat(name)
			if errors.Is(err, fs.ErrNotExist) {
				break // nothing below it exists either
			}
			full := filepath.Join(dir, filepath.FromSlash(name))
			if err != nil {
				return fmt.Errorf("inspect %s: %w", full, err)
			}
			switch {
			case st.Mode()&fs.ModeSymlink != 0:
				target, _ := root.Readlink(name)
				return &DestError{Path: full, Reason: fmt.Sprintf("is a symlink (to %s); nexus core extract writes only into real folders", target)}
			case !leaf && !st.IsDir():
				return &DestError{Path: full, Reason: "is not a folder, and the distribution has files beneath it"}
			case leaf && !st.Mode().IsRegular():
				return &DestError{Path: full, Reason: "is in the place of a file of the distribution and is not a regular file"}
			case leaf:
				exist = append(exist, f)
			}
		}
	}
	if len(exist) > 0 && !force {
		return &ExistsError{Dir: dir, Files: exist}
	}
	return nil
}

// createBeneath writes a new file; an existing one (created since the check) is
// an error, never overwritten.
func createBeneath(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &ExistsError{Dir: root.Name(), Files: []string{name}}
		}
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return f.Close()
}

// replaceBeneath replaces name atomically: a reader sees the old or the new
// content, never a mix.
func replaceBeneath(root *os.Root, name string, data []byte) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(name), "."+path.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	if err := createBeneath(root, tmp, data); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return nil
}
