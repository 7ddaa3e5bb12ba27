package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/state"
)

// Every file an install or uninstall reads, writes or removes is opened
// beneath one folder, the anchor, with os.Root (the store's mechanism: see
// internal/state/confine.go): the project for a project install, the home
// folder (or the filesystem root, for a user's own files kept elsewhere)
// for a user install, the package folder for a package. A cloned
// repository that ships a host's folder or file as a symlink leading out of
// the project therefore cannot send a write, a backup or a removal
// anywhere else: the operation is refused, naming the symlink. Writes are
// atomic (temporary file, fsync, rename) through atomicfile.WriteFileIn.

// escapeHint ends the refusal message.
const escapeHint = "Replace the symlink with a real folder or file (the host's settings, agents and skills must live inside the folder nexus installs into)"

// Anchor is the folder an install stays beneath.
type Anchor struct {
	dir  string   // absolute
	root *os.Root // nil only on a dry run into a folder that does not exist
	// PlainFrom is the name beneath which no folder or file nexus acts on
	// may be a symlink ("" = everything beneath the anchor); see
	// CheckPlain. A user's own files outside it (a host's settings kept in
	// a dotfiles folder) may be reached through symlinks.
	PlainFrom string
}

// OpenAnchor opens dir; create makes it first when missing (a package
// folder the user named), otherwise a missing dir reads as empty.
func OpenAnchor(dir string, create bool) (*Anchor, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return &Anchor{dir: dir}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &Anchor{dir: dir, root: r}, nil
}

// Close releases the anchor.
func (a *Anchor) Close() {
	if a.root != nil {
		a.root.Close()
	}
}

// Dir is the anchor's folder.
func (a *Anchor) Dir() string { return a.dir }

// Full is the absolute path of a name beneath the anchor (for messages and
// reports).
func (a *Anchor) Full(name string) string {
	return filepath.Join(a.dir, filepath.FromSlash(name))
}

// NameOf turns an absolute path inside the anchor into a name beneath it.
func (a *Anchor) NameOf(p string) (string, error) {
	r, err := filepath.Rel(a.dir, p)
	if err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("%s is not inside %s", p, a.dir)
	}
	return filepath.ToSlash(r), nil
}

// explain names the symlink when os.Root refused to leave the anchor.
func (a *Anchor) explain(name string, err error) error {
	err = state.Explain(a.dir, a.Full(name), err)
	var ee *state.EscapeError
	if errors.As(err, &ee) {
		ee.Hint = escapeHint
	}
	return err
}

// Read returns name's content (exists false when it is missing), at most
// limit bytes; a larger file, or one that is not a regular file (a FIFO, a
// device), is an error naming it (see internal/safefile).
func (a *Anchor) Read(name string, limit int64) ([]byte, bool, error) {
	if a.root == nil {
		return nil, false, nil
	}
	b, err := safefile.ReadIn(a.root, name, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// SymlinkError refuses to act on a file through a symlink: install and
// uninstall write and remove only plain files in plain folders, so a
// repository's symlink (a host's agents folder -> ../.git) can never turn
// one of nexus's paths into another file.
type SymlinkError struct {
	Path   string // the file nexus was about to write or remove
	Link   string // the symlink on the way (Path itself, or a folder)
	Target string
}

func (e *SymlinkError) Error() string {
	what := "a folder on the way to it"
	if e.Link == e.Path {
		what = "the file itself"
	}
	return fmt.Sprintf("refusing to write or remove %s: %s is a symlink (to %s), %s; nexus installs and uninstalls only real files in real folders. %s",
		e.Path, e.Link, e.Target, what, symlinkHint)
}

const symlinkHint = "Replace the symlink with a real folder or file (or remove it), then run the command again"

// CheckPlain refuses name when it, or a folder between a.PlainFrom and
// it, is a symlink. It only reads: it runs for every name an install or
// uninstall will touch before anything is written or removed.
func (a *Anchor) CheckPlain(name string) error {
	if a.root == nil {
		return nil
	}
	rest := name
	cur := ""
	if a.PlainFrom != "" {
		if name != a.PlainFrom && !strings.HasPrefix(name, a.PlainFrom+"/") {
			return nil // the user's own file elsewhere (user scope)
		}
		cur, rest = a.PlainFrom, strings.TrimPrefix(strings.TrimPrefix(name, a.PlainFrom), "/")
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" {
			continue
		}
		cur = path.Join(cur, seg)
		st, err := a.root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return a.explain(name, fmt.Errorf("inspect %s: %w", a.Full(cur), err))
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			t, _ := a.root.Readlink(cur)
			return &SymlinkError{Path: a.Full(name), Link: a.Full(cur), Target: t}
		}
	}
	return nil
}

// Perm is name's permission bits (def when it is missing).
func (a *Anchor) Perm(name string, def os.FileMode) os.FileMode {
	if a.root == nil {
		return def
	}
	if st, err := a.root.Stat(name); err == nil {
		return st.Mode().Perm()
	}
	return def
}

// Exists reports whether something (a symlink included) is at name.
func (a *Anchor) Exists(name string) bool {
	if a.root == nil {
		return false
	}
	_, err := a.root.Lstat(name)
	return !errors.Is(err, fs.ErrNotExist)
}

// Write replaces name atomically beneath the anchor.
func (a *Anchor) Write(name string, data []byte, perm os.FileMode) error {
	if a.root == nil {
		return fmt.Errorf("write %s: %s does not exist", a.Full(name), a.dir)
	}
	return a.explain(name, atomicfile.WriteFileIn(a.root, name, data, perm))
}

// Remove deletes name beneath the anchor (a missing file is fine), then
// the folders it leaves empty up to, not including, stop.
func (a *Anchor) Remove(name, stop string) error {
	if a.root == nil {
		return nil
	}
	if err := atomicfile.RemoveIn(a.root, name); err != nil {
		return a.explain(name, err)
	}
	for d := path.Dir(name); d != "." && d != path.Clean(stop); d = path.Dir(d) {
		// Only a real, empty folder: Remove would also delete a symlink.
		if st, err := a.root.Lstat(d); err != nil || !st.IsDir() || a.root.Remove(d) != nil {
			break
		}
	}
	return nil
}

// Resolve follows the symlinks of p's longest existing ancestor (os.Root
// never follows an absolute symlink), so a user's folder kept in a
// dotfiles folder (a host's folder in the home, linked there) is written where it
// leads, and a path names the file the way a host that canonicalises paths
// does.
func Resolve(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
