package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// Every file of .nexus/ is read as hostile input (a cloned repository can
// ship any of them, or a symlink in their place): beneath the layout's
// anchor, so a symlink is followed only while it stays inside it; opened
// without blocking and only when it is a regular file; through the limit
// of its kind below (docs/security.md lists them). Over the limit is a
// *safefile.TooLargeError naming the file and the limit; nothing is
// allocated from the size a file claims.
const (
	// MaxPlanBytes bounds plan.json (a plan of a thousand issues with long
	// decisions stays under 2 MiB).
	MaxPlanBytes = 8 << 20
	// MaxTasksBytes bounds tasks.json: the 10,000-task benchmark project
	// (scripts/benchtable) is 5.6 MB.
	MaxTasksBytes = 32 << 20
	// MaxHistoryBytes bounds history.json, which grows by a cycle per
	// finished plan: 10,000 benchmark cycles are 38 MB.
	MaxHistoryBytes = 128 << 20
	// MaxTrackerBytes bounds agent-tracker.json and the other trackers
	// of the harness namespace.
	MaxTrackerBytes = 16 << 20
	// MaxToolLogBytes bounds tool-log.jsonl, read as a stream (a long
	// session's 100,000 calls are about 30 MB).
	MaxToolLogBytes = 128 << 20
	// MaxMemoryAccessBytes bounds memory-access.jsonl (one line of about
	// 200 bytes per memory file ever read).
	MaxMemoryAccessBytes = 16 << 20
	// MaxGitignoreBytes bounds .nexus/.gitignore.
	MaxGitignoreBytes = 64 << 10
	// MaxRecordBytes bounds the small records of the harness namespace
	// (session.json, the active skill, the reminders) and any other
	// state file without a limit of its own.
	MaxRecordBytes = 1 << 20
	// MaxNoteBytes bounds a file of memory/, rules/ or context/ (nexus
	// writes memory notes of at most 256 KiB).
	MaxNoteBytes = 1 << 20
	// MaxGitFileBytes bounds .git/HEAD and a worktree's .git file.
	MaxGitFileBytes = 64 << 10
	// MaxDirEntries bounds a listing of a folder of .nexus/ (memory/,
	// rules/, context/, state/, a plugin's folder).
	MaxDirEntries = 10000
	// MaxWalkDepth and MaxWalkEntries bound a walk of a folder of .nexus/
	// (nexus doctor's symlink and lock checks, memory gc): how many
	// folders deep, and how many entries in all.
	MaxWalkDepth   = 32
	MaxWalkEntries = 100000
)

// LimitFor is the read limit of a file of the layout, by its name.
func LimitFor(path string) int64 {
	switch filepath.Base(path) {
	case "plan.json":
		return MaxPlanBytes
	case "tasks.json":
		return MaxTasksBytes
	case "history.json":
		return MaxHistoryBytes
	case "agent-tracker.json", "edit-tracker.json", "reopen-tracker.json":
		return MaxTrackerBytes
	case "tool-log.jsonl":
		return MaxToolLogBytes
	case "memory-access.jsonl":
		return MaxMemoryAccessBytes
	case ".gitignore":
		return MaxGitignoreBytes
	}
	return MaxRecordBytes
}

// withAnchor runs fn with a root on the anchor and p's name beneath it.
// A missing anchor reads as a missing file.
func (l Layout) withAnchor(p string, fn func(root *os.Root, name string) error) error {
	name, err := l.rel(p)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(l.Anchor())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
		}
		return fmt.Errorf("read %s: %w", p, err)
	}
	defer root.Close()
	return fn(root, name)
}

// Open opens p, a file of the layout, for reading beneath the anchor:
// without blocking, and only if it is a regular file (see the limits
// above; the caller bounds what it reads, e.g. with safefile.Reader). A
// missing file is an error matching fs.ErrNotExist.
func (l Layout) Open(p string) (*os.File, fs.FileInfo, error) {
	var f *os.File
	var st fs.FileInfo
	err := l.withAnchor(p, func(root *os.Root, name string) error {
		var err error
		f, st, err = safefile.OpenIn(root, name)
		return err
	})
	return f, st, err
}

// ReadFile reads p, a file of the layout, beneath the anchor through
// limit (LimitFor(p) when limit <= 0). A missing file is an error
// matching fs.ErrNotExist.
func (l Layout) ReadFile(p string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = LimitFor(p)
	}
	var b []byte
	err := l.withAnchor(p, func(root *os.Root, name string) error {
		var err error
		b, err = safefile.ReadIn(root, name, limit)
		return err
	})
	return b, err
}

// ReadDir lists the folder p of the layout beneath the anchor, sorted,
// refusing one of more than MaxDirEntries entries (*safefile.TooManyError).
// Entries are what they are: a symlink is listed as a symlink.
func (l Layout) ReadDir(p string) ([]fs.DirEntry, error) {
	var ents []fs.DirEntry
	err := l.withAnchor(p, func(root *os.Root, name string) error {
		var err error
		ents, err = safefile.ReadDirIn(root, name, MaxDirEntries)
		return err
	})
	return ents, err
}

// Walk walks the folder p of the layout beneath the anchor, in lexical
// order, within MaxWalkDepth and MaxWalkEntries, never entering a
// symlinked folder (safefile.WalkIn); fn gets absolute paths. A walk
// over a limit hands fn a *safefile.TooManyError for the folder where it
// stopped.
func (l Layout) Walk(p string, fn fs.WalkDirFunc) error {
	walked := false
	err := l.withAnchor(p, func(root *os.Root, name string) error {
		walked = true
		return safefile.WalkIn(root, name, safefile.WalkLimits{Depth: MaxWalkDepth, Entries: MaxWalkEntries},
			func(rel string, d fs.DirEntry, err error) error {
				return fn(filepath.Join(l.Anchor(), filepath.FromSlash(rel)), d, err)
			})
	})
	if !walked && err != nil {
		return fn(p, nil, err) // as fs.WalkDir reports a root it cannot stat
	}
	return err
}

// readFile is ReadFile with a missing file as (nil, false, nil).
func (l Layout) readFile(p string) ([]byte, bool, error) {
	b, err := l.ReadFile(p, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// readAt reads path beneath its own folder (for path-based readers of a
// file outside any known layout): the file itself may not lead out of its
// folder; the folder is taken as the path names it.
func readAt(path string) ([]byte, bool, error) {
	b, err := safefile.Read(filepath.Dir(path), filepath.Base(path), LimitFor(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// openAt opens path beneath its own folder (see readAt).
func openAt(path string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	return safefile.OpenIn(root, filepath.Base(path))
}
