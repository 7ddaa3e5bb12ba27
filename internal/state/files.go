package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/schema"
)

// CheckName refuses a file name that could not stay inside its folder by
// its text alone: empty, absolute, containing ".." or a NUL byte, or naming
// the folder itself. It returns the cleaned, slash-separated name. Symlinks
// are not its business: the write itself is made beneath the folder with
// os.Root (WriteContainedLocked), which refuses any that leads out.
func CheckName(root, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("file name is empty")
	}
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("file name %q contains a NUL byte", name)
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return "", fmt.Errorf("file name %q is absolute; give a name relative to %s", name, root)
	}
	for _, seg := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", fmt.Errorf("file name %q contains \"..\"; it must stay inside %s", name, root)
		}
	}
	clean := filepath.Clean(filepath.FromSlash(name))
	if clean == "." {
		return "", fmt.Errorf("file name %q names the directory itself", name)
	}
	return filepath.ToSlash(clean), nil
}

// ContainedPath joins name under root and refuses anything that would land
// outside it: absolute names, ".." segments, and symlinks (in the parents or
// the file itself) that lead out of root. It is for reading and for
// messages; writes go through WriteContainedLocked, which needs no such
// check beforehand.
func ContainedPath(root, name string) (string, error) {
	clean, err := CheckName(root, name)
	if err != nil {
		return "", err
	}
	clean = filepath.FromSlash(clean)
	realRoot, err := realDir(root)
	if err != nil {
		return "", err
	}
	// Walk every existing component: a symlink anywhere on the way must
	// resolve inside the root.
	cur := root
	for _, seg := range strings.Split(clean, string(filepath.Separator)) {
		cur = filepath.Join(cur, seg)
		st, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("inspect %s: %w", cur, err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", fmt.Errorf("file name %q goes through a broken symlink %s", name, cur)
			}
			if !within(realRoot, target) {
				return "", fmt.Errorf("file name %q goes through the symlink %s, which leads outside %s", name, cur, root)
			}
		}
	}
	return filepath.Join(root, clean), nil
}

func realDir(dir string) (string, error) {
	r, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return filepath.Abs(dir) // nothing there to follow yet
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", dir, err)
	}
	return r, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// dirLock returns the lock guarding writes to one of the tracked text
// directories (memory/, rules/, context/) or artifacts/. It lives in the
// ignored state/ folder so git never sees it.
func (l Layout) dirLock(name string) string { return filepath.Join(l.StateDir(), name+".lock") }

// WriteArtifact writes content verbatim to state/artifacts/<name>
// (overwriting) and returns the absolute path written.
func (s *Store) WriteArtifact(ctx context.Context, name string, content []byte) (string, error) {
	return s.writeContained(ctx, s.L.ArtifactsDir(), "artifacts", name, content)
}

// WriteMemoryFile writes .nexus/memory/<name>.
func (s *Store) WriteMemoryFile(ctx context.Context, name string, content []byte) (string, error) {
	return s.writeContained(ctx, s.L.MemoryDir(), "memory", name, content)
}

// WriteRule writes .nexus/rules/<name>.
func (s *Store) WriteRule(ctx context.Context, name string, content []byte) (string, error) {
	return s.writeContained(ctx, s.L.RulesDir(), "rules", name, content)
}

// LockDir takes the lock of one of the text directories ("memory",
// "rules", "context", "artifacts") for a longer read-modify-write.
func (s *Store) LockDir(ctx context.Context, name string) (*filelock.Lock, error) {
	return s.lockPath(ctx, s.L.dirLock(name))
}

func (s *Store) writeContained(ctx context.Context, root, lockName, name string, content []byte) (string, error) {
	l, err := s.LockDir(ctx, lockName)
	if err != nil {
		return "", err
	}
	defer l.Release()
	return s.WriteContainedLocked(root, name, content)
}

// WriteContainedLocked writes root/name atomically; the caller holds the
// directory lock (LockDir). root is a folder of the layout (artifacts/,
// memory/, rules/, context/): the file is written through a handle on that
// folder opened beneath the anchor, so neither the folder nor anything in
// name may be a symlink leading out of it. A refusal is an *EscapeError
// naming the symlink.
func (s *Store) WriteContainedLocked(root, name string, content []byte) (string, error) {
	clean, err := CheckName(root, name)
	if err != nil {
		return "", err
	}
	full := filepath.Join(root, filepath.FromSlash(clean))
	if skip, err := s.prepareWrite(); skip || err != nil {
		if err != nil {
			return "", err
		}
		return filepath.Abs(full)
	}
	err = s.beneath(root, func(anchor *os.Root, dir string) error {
		folder, err := atomicfile.OpenDirIn(anchor, dir)
		if err != nil {
			return err
		}
		defer folder.Close()
		if err := atomicfile.WriteFileIn(folder, clean, content, 0o644); err != nil {
			return explain(root, full, err)
		}
		return nil
	})
	if err != nil {
		var ee *EscapeError
		if errors.As(err, &ee) && ee.Path == root {
			ee.Path = full // the folder itself is the link: name the file
		}
		return "", err
	}
	return filepath.Abs(full)
}

// ReadContained reads root/name the way WriteContainedLocked writes it:
// beneath the folder, so a file (or folder) that is a symlink leading out of
// it is refused with an *EscapeError instead of read. Read-modify-write
// callers (a rule appended to, a memory extended) use it so that no
// content from outside the folder is copied into it. A missing file is
// fs.ErrNotExist. The file must be a regular file of at most MaxNoteBytes.
func (s *Store) ReadContained(root, name string) ([]byte, error) {
	clean, err := CheckName(root, name)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(root, filepath.FromSlash(clean))
	var b []byte
	err = s.beneath(root, func(anchor *os.Root, dir string) error {
		folder, err := anchor.OpenRoot(dir)
		if err != nil {
			return err
		}
		defer folder.Close()
		b, err = safefile.ReadIn(folder, clean, MaxNoteBytes)
		return err
	})
	var ee *EscapeError
	if errors.As(err, &ee) && ee.Path == root {
		ee.Path = full
	}
	return b, err
}

// RemoveContainedLocked deletes root/name beneath the folder (a missing
// file is fine), as WriteContainedLocked writes it: neither the folder nor
// a folder in name may be a symlink leading out of it. The caller holds
// the directory lock.
func (s *Store) RemoveContainedLocked(root, name string) error {
	if s.dryRun {
		return nil
	}
	clean, err := CheckName(root, name)
	if err != nil {
		return err
	}
	full := filepath.Join(root, filepath.FromSlash(clean))
	return s.beneath(root, func(anchor *os.Root, dir string) error {
		folder, err := anchor.OpenRoot(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		defer folder.Close()
		return explain(root, full, atomicfile.RemoveIn(folder, clean))
	})
}

// EnsureTree creates .nexus/, state/ and the harness namespace, and writes
// .nexus/.gitignore when it is missing (an existing one is left alone).
// It reports whether the .gitignore it found fails to ignore state/.
func (s *Store) EnsureTree() (gitignoreOK bool, err error) {
	if s.dryRun {
		return true, nil
	}
	if err := s.mkdirAll(s.L.HarnessDir()); err != nil {
		return false, fmt.Errorf("create %s: %w", s.L.HarnessDir(), err)
	}
	b, wrote, err := s.writeGitignore()
	if err != nil {
		return false, err
	}
	return wrote || ignoresState(string(b)), nil
}

func ignoresState(gitignore string) bool {
	for _, line := range strings.Split(gitignore, "\n") {
		switch strings.TrimSpace(line) {
		case "state/", "state", "/state/", "/state", "state/*", "state/**", "*":
			return true
		}
	}
	return false
}

// UpdateMemoryAccess runs fn over the memory-access records under their
// lock and rewrites the file atomically; every record is checked against
// memory-access.schema.json first. Malformed lines are skipped on read
// (digest §5.1) and so dropped by the rewrite.
func (s *Store) UpdateMemoryAccess(ctx context.Context, fn func([]MemoryAccess) ([]MemoryAccess, error)) error {
	path := s.L.MemoryAccessPath()
	l, err := s.lockPath(ctx, filelock.PathFor(path))
	if err != nil {
		return err
	}
	defer l.Release()
	recs, err := ReadMemoryAccess(path)
	if err != nil {
		return err
	}
	recs, err = fn(recs)
	if err != nil {
		return err
	}
	var buf []byte
	for i, r := range recs {
		line, err := marshalCompact(r)
		if err != nil {
			return err
		}
		if s.V != nil {
			var v any
			_ = json.Unmarshal(line, &v)
			ps, err := s.V.Validate(schema.StateMemory, v)
			if err != nil {
				return err
			}
			if len(ps) > 0 {
				for j := range ps {
					ps[j].Pointer = fmt.Sprintf("/line %d%s", i+1, ps[j].Pointer)
				}
				return &InvalidWriteError{Path: path, Problems: ps}
			}
		}
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	return s.writeFile(path, buf, true)
}

// ReadMemoryAccess reads a memory-access log, skipping malformed lines.
// It needs no lock: a read overlapping a replacement is retried.
func ReadMemoryAccess(path string) ([]MemoryAccess, error) {
	lines, err := readLinesStable(path)
	if err != nil {
		return nil, err
	}
	out := make([]MemoryAccess, 0, len(lines))
	for _, line := range lines {
		// Lines as nexus writes them are read without a JSON decoder
		// (memory gc reads one per memory file ever read).
		r, ok := parseCanonical(line)
		if !ok {
			r = MemoryAccess{}
			if json.Unmarshal(line, &r) != nil {
				continue
			}
		}
		if r.Path == "" {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// RemoveHarnessFile deletes a file of this harness's namespace under its lock.
func (s *Store) RemoveHarnessFile(ctx context.Context, path string) error {
	if filepath.Dir(path) != s.L.HarnessDir() {
		return fmt.Errorf("refusing to remove %s: not in this harness's namespace %s", path, s.L.HarnessDir())
	}
	l, err := s.lockPath(ctx, filelock.PathFor(path))
	if err != nil {
		return err
	}
	defer l.Release()
	return s.removeFile(path)
}
