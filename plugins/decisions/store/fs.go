// Package store is the Nauro store on disk: a project store directory
// (decision files, root markdown files, snapshots) with the reference's
// per-file "<file>.lock" flock locks, and the control plane around it
// ($NAURO_HOME, registry.json v2, the repo pointer .nauro/config.json).
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// lockTimeout bounds waits on the store's locks.
const lockTimeout = 10 * time.Second

// FS is a project store directory. It implements kernel.Store and
// kernel.CorpusCache: parsed decisions are cached per file and re-read
// only when that file changes (see cache.go).
type FS struct {
	root    string
	r       *os.Root
	control bool // a repository or $NAURO_HOME, not a store (messages)

	mu    sync.Mutex
	cache corpusCache
}

// Open returns the store at root (which must exist).
func Open(root string) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve store path %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("store %s is not a directory", abs)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	return &FS{root: abs, r: r}, nil
}

// Root is the store directory.
func (f *FS) Root() string { return f.root }

// Close releases the store's directory handle and watch.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cache.close()
	return f.r.Close()
}

// ReadFile implements kernel.Store. Missing files and directories read as
// absent; a path that leaves the store through a symlink is refused with
// a *kernel.ProblemError naming the symlink.
func (f *FS) ReadFile(rel string) (string, bool, error) {
	if err := checkRel(rel); err != nil {
		return "", false, &kernel.ProblemError{File: rel, Reason: err.Error()}
	}
	limit := int64(maxStoreFile)
	if strings.HasPrefix(rel, kernel.DecisionsDir+"/") {
		limit = maxDecisionFile
	}
	b, err := readIn(f.r, rel, limit)
	if err != nil {
		var nr *NotRegularError
		if errors.Is(err, fs.ErrNotExist) || isDirErr(err) || errors.As(err, &nr) && nr.Kind == "a folder" {
			return "", false, nil
		}
		err = f.explain(rel, err)
		if refused(err) {
			return "", false, &kernel.ProblemError{File: rel, Reason: err.Error()}
		}
		return "", false, fmt.Errorf("read %s: %w", path.Join(f.root, rel), err)
	}
	return string(b), true, nil
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.EISDIR)
}

// WriteFile implements kernel.Store: an atomic replace beneath the store
// root under the reference-compatible lock on "<file>.lock".
func (f *FS) WriteFile(ctx context.Context, rel, text string) error {
	lock, err := f.lock(ctx, rel+".lock")
	if err != nil {
		return err
	}
	defer lock.Release()
	return f.writeAtomic(rel, []byte(text))
}

// writeUnlocked writes a file of a store nobody else can see yet (the
// scaffold), without creating its sidecar lock.
func (f *FS) writeUnlocked(rel, text string) error { return f.writeAtomic(rel, []byte(text)) }

// ListDecisions implements kernel.Store: stems of decisions/*.md in code
// point order.
func (f *FS) ListDecisions() ([]string, error) {
	names, err := f.decisionNames()
	if err != nil {
		return nil, err
	}
	stems := make([]string, len(names))
	for i, n := range names {
		stems[i] = strings.TrimSuffix(n, ".md")
	}
	return stems, nil
}

// decisionNames lists decisions/*.md (files and symlinks, not folders) in
// byte order, which is code-point order for UTF-8 as the reference sorts.
func (f *FS) decisionNames() ([]string, error) {
	ents, err := readDirIn(f.r, kernel.DecisionsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list decisions: %w", f.explain(kernel.DecisionsDir, err))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Corpus implements kernel.CorpusCache.
func (f *FS) Corpus() (*kernel.Corpus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cache.corpus(f)
}

// ListMarkdown returns every *.md file of the store, store-relative.
// Folders that are symlinks are not entered; the walk is bounded (see
// bounded.go).
func (f *FS) ListMarkdown() ([]string, error) {
	var out []string
	err := walkIn(f.r, ".", func(p string, d fs.DirEntry) error {
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// refused reports whether err is a refusal to read a file as it is
// (outside the store, too large, not a regular file): a problem with that
// file, not with the store.
func refused(err error) bool {
	var tl *TooLargeError
	var nr *NotRegularError
	return errors.Is(err, ErrOutsideStore) || errors.As(err, &tl) || errors.As(err, &nr)
}

// Lock is a held store lock.
type Lock interface{ Release() error }

// DecisionWriteLock serialises proposals between local writers (the
// reference's decisions/.lock).
func (f *FS) DecisionWriteLock(ctx context.Context) (Lock, error) {
	return f.lock(ctx, kernel.DecisionsDir+"/.lock")
}

// RMWLock guards a read-modify-write of a root file ("<file>.rmwlock").
func (f *FS) RMWLock(ctx context.Context, rel string) (Lock, error) {
	return f.lock(ctx, rel+".rmwlock")
}

// SameFolder reports whether f and g hold the same directory (device and
// inode of the folders they opened). A store folder replaced under its
// path (moved away and copied back, or removed and created again) is a
// different directory: a holder of the old one must open the new. While f
// holds its directory open, its inode cannot be reused by another.
func (f *FS) SameFolder(g *FS) bool {
	a, err1 := f.r.Stat(".")
	b, err2 := g.r.Stat(".")
	if err1 != nil || err2 != nil {
		return false
	}
	return os.SameFile(a, b)
}

// ReleaseWatch closes the store's directory watch (an inotify instance
// on Linux, of which a user has 128 by default). The cache is kept; the
// next Corpus re-checks every file's identity, then watches again.
func (f *FS) ReleaseWatch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cache.releaseWatch()
}

// Watching reports whether the store holds a directory watch.
func (f *FS) Watching() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cache.watch != nil
}
