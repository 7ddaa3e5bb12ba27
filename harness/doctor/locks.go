package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/state"
)

// Default thresholds of the Locks check.
const (
	// DefaultLockGrace: nexus holds a lock for a read, a small edit and a
	// rename (well under a millisecond); one still held after this long is
	// reported.
	DefaultLockGrace = 500 * time.Millisecond
	// DefaultTempAge: atomicfile's temporary files live for one write; one
	// older than this was left by a writer that was killed.
	DefaultTempAge = time.Minute
)

// Locks checks the sidecar .lock files and the temporary files of atomic
// writes.
//
// A lock file on disk is not a problem: flock(2) locks die with their
// holder, so a lock that can be taken now is free, whatever is on disk. A
// lock still held after Grace is reported with its holder (from /proc/locks
// where the platform has it); nexus never breaks a lock. A temporary file
// (".<name>.tmp-<random>") older than TempAge was left by a killed writer
// and is removed by --fix.
//
// Looked at: .nexus/, state/, this harness's namespace, and (with their
// subfolders) artifacts/, memory/, context/ and rules/. Other harnesses'
// namespaces are skipped.
type Locks struct {
	Layout  state.Layout
	Grace   time.Duration
	TempAge time.Duration
	Now     func() time.Time
}

func (Locks) Name() string { return "locks" }

func (c Locks) Run(ctx context.Context) []Finding {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	grace, tempAge := c.Grace, c.TempAge
	if grace <= 0 {
		grace = DefaultLockGrace
	}
	if tempAge <= 0 {
		tempAge = DefaultTempAge
	}
	locks, temps, stopped := c.scan()

	// First try every lock; wait once for those held, then try them again.
	var held []string
	for _, p := range locks {
		if busy(p) {
			held = append(held, p)
		}
	}
	if len(held) > 0 {
		select {
		case <-time.After(grace):
		case <-ctx.Done():
		}
		still := held[:0]
		for _, p := range held {
			if busy(p) {
				still = append(still, p)
			}
		}
		held = still
	}

	var out []Finding
	for _, p := range held {
		holder := "a process /proc/locks does not show"
		if h, ok := lockHolder(p); ok {
			holder = h
		}
		out = append(out, warn(fmt.Sprintf("%s has been held for over %s by %s; nexus commands that need it wait up to 10 s and then fail", p, age(grace), holder),
			"if that process is stuck, end it: the kernel frees the lock when it exits (nexus never breaks a lock)"))
	}
	var old []string
	for _, t := range temps {
		st, err := os.Lstat(t)
		if err == nil && now().Sub(st.ModTime()) > tempAge {
			old = append(old, t)
		}
	}
	if len(old) > 0 {
		list := old
		if len(list) > maxListed {
			list = append(append([]string(nil), list[:maxListed]...), fmt.Sprintf("and %d more", len(old)-maxListed))
		}
		out = append(out, warn(fmt.Sprintf("%s left by writers that were killed: %s", plural(len(old), "temporary file"), strings.Join(list, ", ")),
			fmt.Sprintf("delete them (they are never renamed into place once older than %s)", age(tempAge))).repairedBy(func(context.Context) (string, error) {
			return removeOldTemps(c.Layout, old, tempAge, now)
		}))
	}
	for _, why := range stopped {
		out = append(out, warn("the lock and temporary-file scan stopped early: "+why,
			"a folder of .nexus/ this large or deep is unusual: look at what is in it"))
	}
	if len(out) == 0 {
		out = append(out, ok("%s, none held; no leftover temporary files", plural(len(locks), "lock file")))
	}
	return out
}

// scan lists lock files and temporary files, within the layout's listing
// and walk limits (stopped says where a limit cut the scan short).
func (c Locks) scan() (locks, temps, stopped []string) {
	l := c.Layout
	flat := []string{l.Nexus, l.StateDir(), l.HarnessDir()}
	deep := []string{l.ArtifactsDir(), l.MemoryDir(), l.ContextDir(), l.RulesDir()}
	visit := func(dir, name string, isDir bool) {
		if isDir {
			return
		}
		p := filepath.Join(dir, name)
		switch {
		case isTemp(name):
			temps = append(temps, p)
		case strings.HasSuffix(name, ".lock"):
			locks = append(locks, p)
		}
	}
	limit := func(err error) {
		var tm *safefile.TooManyError
		if errors.As(err, &tm) {
			stopped = append(stopped, tm.Error())
		}
	}
	for _, dir := range flat {
		entries, err := l.ReadDir(dir)
		limit(err)
		for _, e := range entries {
			visit(dir, e.Name(), e.IsDir())
		}
	}
	for _, root := range deep {
		_ = l.Walk(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				limit(err)
				return nil
			}
			visit(filepath.Dir(p), d.Name(), d.IsDir())
			return nil
		})
	}
	sort.Strings(locks)
	sort.Strings(temps)
	return locks, temps, stopped
}

// isTemp matches the names atomicfile.WriteFile gives its temporary files:
// "." + base + ".tmp-" + digits.
func isTemp(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndex(name, ".tmp-")
	if i <= 0 || i+5 == len(name) {
		return false
	}
	for _, r := range name[i+5:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// busy reports whether someone holds the lock at path. Taking it for an
// instant is the only reliable test: flock locks carry no age or owner.
//
// The lock file is opened without blocking, never created, and only when
// it is a regular file: a planted FIFO or device named *.lock is not a
// nexus lock.
func busy(path string) bool {
	f, _, err := safefile.Open(path)
	if err != nil {
		return false // unreadable or not a lock file: not ours to judge
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// removeOldTemps removes through the layout's anchor (state.Layout.
// RemoveFile): a temporary file listed through a symlinked folder that
// leads out of the project is never removed.
func removeOldTemps(l state.Layout, files []string, minAge time.Duration, now func() time.Time) (string, error) {
	var removed []string
	for _, f := range files {
		// Check again: never remove a file a writer is still using.
		st, err := os.Lstat(f)
		if err != nil || now().Sub(st.ModTime()) <= minAge {
			continue
		}
		if err := l.RemoveFile(f); err != nil {
			return strings.Join(removed, ", "), fmt.Errorf("remove %s: %w", f, err)
		}
		removed = append(removed, filepath.Base(f))
	}
	if len(removed) == 0 {
		return "", nil
	}
	return fmt.Sprintf("removed %s: %s", plural(len(removed), "leftover temporary file"), strings.Join(removed, ", ")), nil
}
