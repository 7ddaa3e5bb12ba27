package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/filelock"
)

// Every file the store writes is opened beneath one root, the anchor, with
// os.Root: a symlink that leads out of the anchor (or "..") fails the write
// instead of being followed, and no check precedes the use.
//
//   - With the default layout (<project>/.nexus) the anchor is the project:
//     a symlinked .nexus, state/ or artifacts/ is followed while it stays
//     inside the project and refused when it leads out of it. Keeping .nexus
//     elsewhere is the user's decision, made with runtime.root or
//     --nexus-root, never the repository's.
//   - With a .nexus folder chosen by the user (runtime.root, --nexus-root,
//     NEXUS_RUNTIME_ROOT) the anchor is that folder.
//
// The folders a repository ships (memory/, rules/, context/) are written
// through a root of their own, so nothing written there leaves them either.

// Anchor is the folder every write of the layout stays beneath.
func (l Layout) Anchor() string {
	if l.Nexus == filepath.Join(l.Project, ".nexus") {
		return l.Project
	}
	return l.Nexus
}

// rel turns a path of the layout into a name beneath the anchor.
func (l Layout) rel(p string) (string, error) {
	r, err := filepath.Rel(l.Anchor(), p)
	if err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("%s is not inside %s", p, l.Anchor())
	}
	return filepath.ToSlash(r), nil
}

// EscapeError refuses a write that a symlink would send out of its folder.
type EscapeError struct {
	Path   string // the file nexus was writing
	Link   string // the symlink on the way ("" when it could not be named)
	Target string // where Link points
	Root   string // the folder the write must stay in
	// Absolute: Link stays inside Root but names its target by absolute
	// path, which os.Root never follows.
	Absolute bool
	// Hint, when set, replaces the advice that ends the message (the
	// default one is about .nexus).
	Hint string
}

func (e *EscapeError) Error() string {
	if e.Link == "" {
		return fmt.Sprintf("refusing to write %s: the path leads out of %s through a symlink; "+
			"nexus never writes through a symlink that leaves its folder (see docs/security.md)", e.Path, e.Root)
	}
	if e.Absolute {
		return fmt.Sprintf("refusing to write %s: %s is a symlink with an absolute target (%s); "+
			"nexus follows only relative symlinks that stay inside %s. Make it relative, or replace it with a real folder; see docs/security.md",
			e.Path, e.Link, e.Target, e.Root)
	}
	hint := e.Hint
	if hint == "" {
		hint = "Replace the symlink with a real folder (or, to keep .nexus elsewhere, set runtime.root in your user configuration)"
	}
	return fmt.Sprintf("refusing to write %s: %s is a symlink to %s, outside %s; "+
		"nexus never writes through a symlink that leaves its folder. %s; see docs/security.md",
		e.Path, e.Link, e.Target, e.Root, hint)
}

// escaped reports whether err is os.Root's refusal of a path that leaves
// the root (the os package exports no sentinel for it).
func escaped(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// Explain turns os.Root's refusal to leave root, met while writing file
// (an absolute path beneath root), into an *EscapeError naming the
// symlink; any other error is returned as it is. Writers outside the store
// that open their files beneath an os.Root (the Claude Code installer) use
// it so their refusals read like the store's.
func Explain(root, file string, err error) error { return explain(root, file, err) }

// explain turns os.Root's refusal into an EscapeError naming the symlink.
// It only inspects, after the write was refused: nothing depends on it.
func explain(root, file string, err error) error {
	if !escaped(err) {
		return err
	}
	e := &EscapeError{Path: file, Root: root}
	realRoot, rerr := filepath.EvalSymlinks(root)
	if rerr != nil {
		return e
	}
	rel, rerr := filepath.Rel(root, file)
	if rerr != nil {
		return e
	}
	cur := root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, seg)
		st, lerr := os.Lstat(cur)
		if lerr != nil {
			break
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(cur)
		resolved, eerr := filepath.EvalSymlinks(cur)
		if eerr != nil || !within(realRoot, resolved) || filepath.IsAbs(target) {
			e.Link, e.Target = cur, target
			e.Absolute = eerr == nil && within(realRoot, resolved)
			return e
		}
	}
	return e
}

// openAnchor opens the anchor (created when missing).
func (l Layout) openAnchor() (*os.Root, error) {
	a := l.Anchor()
	r, err := os.OpenRoot(a)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(a, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", a, err)
		}
		r, err = os.OpenRoot(a)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", a, err)
	}
	return r, nil
}

// beneath runs fn with the anchor and the name of p beneath it; a refusal
// to leave the anchor becomes an EscapeError naming the symlink.
func (l Layout) beneath(p string, fn func(root *os.Root, name string) error) error {
	name, err := l.rel(p)
	if err != nil {
		return err
	}
	root, err := l.openAnchor()
	if err != nil {
		return err
	}
	defer root.Close()
	return explain(l.Anchor(), p, fn(root, name))
}

func (s *Store) beneath(p string, fn func(root *os.Root, name string) error) error {
	return s.L.beneath(p, fn)
}

// OpenFile opens p, a path of the layout, beneath the anchor (see
// Anchor), creating its folder when flag has os.O_CREATE. A symlink on the
// way that leads out of the anchor is refused with an *EscapeError.
func (l Layout) OpenFile(p string, flag int, perm os.FileMode) (*os.File, error) {
	var f *os.File
	err := l.beneath(p, func(root *os.Root, name string) error {
		if flag&os.O_CREATE != 0 {
			if dir := filepath.Dir(filepath.FromSlash(name)); dir != "." {
				if err := root.MkdirAll(filepath.ToSlash(dir), 0o755); err != nil {
					return err
				}
			}
		}
		var err error
		f, err = root.OpenFile(name, flag, perm)
		return err
	})
	return f, err
}

// RemoveFile deletes p, a path of the layout, beneath the anchor and
// fsyncs its folder (a missing file is fine).
func (l Layout) RemoveFile(p string) error {
	return l.beneath(p, func(root *os.Root, name string) error {
		return atomicfile.RemoveIn(root, name)
	})
}

// prepareWrite comes before every write beneath the layout. In a dry run
// it says to skip the write. Otherwise it makes sure .nexus/.gitignore
// exists before anything else is written under .nexus/ (once per store),
// so that no command, whichever runs first, leaves state files, locks or
// logs for git to see; an existing .gitignore is left as it is, as at
// session start (EnsureTree).
func (s *Store) prepareWrite() (skip bool, err error) {
	if s.dryRun {
		return true, nil
	}
	if s.gitignored.Load() {
		return false, nil
	}
	if _, _, err := s.writeGitignore(); err != nil {
		// The write itself says what is wrong (a .nexus leading out of
		// the project is refused there, naming the link); a .gitignore
		// that cannot be read is the doctor's to report.
		return false, nil
	}
	s.gitignored.Store(true)
	return false, nil
}

// writeGitignore creates .nexus/ and its .gitignore when missing, or
// returns the content found.
func (s *Store) writeGitignore() (found []byte, wrote bool, err error) {
	gi := s.L.GitignorePath()
	b, ok, err := s.L.readFile(gi)
	if err != nil || ok {
		return b, false, err
	}
	if err := s.L.beneath(s.L.Nexus, func(root *os.Root, name string) error {
		if name == "." {
			return nil
		}
		return root.MkdirAll(name, 0o755)
	}); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", s.L.Nexus, err)
	}
	// O_EXCL: two processes starting at once must not both write it.
	f, err := s.L.OpenFile(gi, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, true, nil // the other process wrote it
	}
	if err != nil {
		return nil, false, fmt.Errorf("create %s: %w", gi, err)
	}
	defer f.Close()
	if _, err := f.WriteString(GitignoreContent); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", gi, err)
	}
	return nil, true, f.Sync()
}

// writeFile replaces p atomically beneath the anchor.
func (s *Store) writeFile(p string, data []byte, durable bool) error {
	if skip, err := s.prepareWrite(); skip || err != nil {
		return err
	}
	return s.beneath(p, func(root *os.Root, name string) error {
		if durable {
			return atomicfile.WriteFileIn(root, name, data, 0o644)
		}
		return atomicfile.WriteFileInNoSync(root, name, data, 0o644)
	})
}

func (s *Store) removeFile(p string) error {
	if s.dryRun {
		return nil
	}
	return s.L.RemoveFile(p)
}

// lockPath takes the lock file at p beneath the anchor (a nil lock, whose
// Release does nothing, in a dry run).
func (s *Store) lockPath(ctx context.Context, p string) (*filelock.Lock, error) {
	if skip, err := s.prepareWrite(); skip || err != nil {
		return nil, err
	}
	var l *filelock.Lock
	err := s.beneath(p, func(root *os.Root, name string) error {
		var err error
		l, err = filelock.AcquireAt(ctx, root, name, s.LockTimeout)
		return err
	})
	return l, err
}

func (s *Store) openFile(p string, flag int, perm os.FileMode) (*os.File, error) {
	return s.L.OpenFile(p, flag, perm)
}

// mkdirAll creates the folder p beneath the anchor.
func (s *Store) mkdirAll(p string) error {
	if skip, err := s.prepareWrite(); skip || err != nil {
		return err
	}
	return s.beneath(p, func(root *os.Root, name string) error {
		return root.MkdirAll(name, 0o755)
	})
}

// renameFile renames old to new beneath the anchor.
func (s *Store) renameFile(oldPath, newPath string) error {
	if s.dryRun {
		return nil
	}
	newName, err := s.L.rel(newPath)
	if err != nil {
		return err
	}
	return s.beneath(oldPath, func(root *os.Root, name string) error {
		return root.Rename(name, newName)
	})
}
