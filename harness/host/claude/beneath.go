package claude

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

// Every file install and uninstall read, write or remove is opened beneath
// one folder, the anchor, with os.Root (the store's mechanism: see
// internal/state/confine.go): the project for the project scope, the home
// folder for the user scope, the package folder for --plugin. A cloned
// repository that ships .claude, .claude/agents, .claude/skills or .mcp.json
// as a symlink leading out of the project therefore cannot send a write, a
// backup or a removal anywhere else: the operation is refused, naming the
// symlink. Writes are atomic (temporary file, fsync, rename) through
// atomicfile.WriteFileIn.

// escapeHint ends the refusal message.
const escapeHint = "Replace the symlink with a real folder or file (Claude Code's settings, agents and skills must live inside the folder nexus installs into)"

// anchor is the folder an install stays beneath.
type anchor struct {
	dir  string   // absolute
	root *os.Root // nil only on a dry run into a folder that does not exist
	// plainFrom is the name beneath which no folder or file nexus acts on
	// may be a symlink ("" = everything beneath dir); see checkPlain.
	plainFrom string
}

// openAnchor opens dir; create makes it first when missing (a plugin
// folder the user named), otherwise a missing dir reads as empty.
func openAnchor(dir string, create bool) (*anchor, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return &anchor{dir: dir}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &anchor{dir: dir, root: r}, nil
}

func (a *anchor) Close() {
	if a.root != nil {
		a.root.Close()
	}
}

// full is the absolute path of a name beneath the anchor (for messages and
// reports).
func (a *anchor) full(name string) string {
	return filepath.Join(a.dir, filepath.FromSlash(name))
}

// nameOf turns an absolute path inside the anchor into a name beneath it.
func (a *anchor) nameOf(p string) (string, error) {
	r, err := filepath.Rel(a.dir, p)
	if err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("%s is not inside %s", p, a.dir)
	}
	return filepath.ToSlash(r), nil
}

// explain names the symlink when os.Root refused to leave the anchor.
func (a *anchor) explain(name string, err error) error {
	err = state.Explain(a.dir, a.full(name), err)
	var ee *state.EscapeError
	if errors.As(err, &ee) {
		ee.Hint = escapeHint
	}
	return err
}

// read returns name's content (exists false when it is missing), at most
// limit bytes; a larger file, or one that is not a regular file (a FIFO, a
// device), is an error naming it (see internal/safefile).
func (a *anchor) read(name string, limit int64) ([]byte, bool, error) {
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
// repository's symlink (.claude/agents -> ../.git) can never turn one of
// nexus's paths into another file.
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

// checkPlain refuses name when it, or a folder between a.plainFrom and
// it, is a symlink. It only reads: it runs for every name an install or
// uninstall will touch before anything is written or removed.
func (a *anchor) checkPlain(name string) error {
	if a.root == nil {
		return nil
	}
	rest := name
	cur := ""
	if a.plainFrom != "" {
		if name != a.plainFrom && !strings.HasPrefix(name, a.plainFrom+"/") {
			return nil // the user's own file elsewhere (user scope)
		}
		cur, rest = a.plainFrom, strings.TrimPrefix(strings.TrimPrefix(name, a.plainFrom), "/")
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
			return a.explain(name, fmt.Errorf("inspect %s: %w", a.full(cur), err))
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			t, _ := a.root.Readlink(cur)
			return &SymlinkError{Path: a.full(name), Link: a.full(cur), Target: t}
		}
	}
	return nil
}

// perm is name's permission bits (def when it is missing).
func (a *anchor) perm(name string, def os.FileMode) os.FileMode {
	if a.root == nil {
		return def
	}
	if st, err := a.root.Stat(name); err == nil {
		return st.Mode().Perm()
	}
	return def
}

// exists reports whether something (a symlink included) is at name.
func (a *anchor) exists(name string) bool {
	if a.root == nil {
		return false
	}
	_, err := a.root.Lstat(name)
	return !errors.Is(err, fs.ErrNotExist)
}

// write replaces name atomically beneath the anchor.
func (a *anchor) write(name string, data []byte, perm os.FileMode) error {
	if a.root == nil {
		return fmt.Errorf("write %s: %s does not exist", a.full(name), a.dir)
	}
	return a.explain(name, atomicfile.WriteFileIn(a.root, name, data, perm))
}

// remove deletes name beneath the anchor (a missing file is fine), then
// the folders it leaves empty up to, not including, stop.
func (a *anchor) remove(name, stop string) error {
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
