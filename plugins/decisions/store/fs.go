// Package store is the Nauro store on disk: a project store directory
// (decision files, root markdown files, snapshots) with the reference's
// per-file "<file>.lock" flock locks, and the control plane around it
// ($NAURO_HOME, registry.json v2, the repo pointer .nauro/config.json).
package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// lockTimeout bounds waits on the store's locks.
const lockTimeout = 10 * time.Second

// FS is a project store directory. It implements kernel.Store and
// kernel.CorpusCache: parsed decisions and their indexes are kept until a
// decision file's name, size or modification time changes.
type FS struct {
	root string

	mu       sync.Mutex
	key      uint64
	corpus   *kernel.Corpus
	parsed   map[string]cachedFile
	watch    *dirWatch // nil until decisions/ exists (or off Linux)
	lastFull time.Time
}

// fullCheckInterval bounds how long the watch alone vouches for the cache.
// The periodic stat pass catches what inotify cannot see: a decision file
// that is a symlink edited through its target, or a store on a network
// file system changed from another machine.
const fullCheckInterval = 2 * time.Second

type cachedFile struct {
	size  int64
	mtime int64
	text  string
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
	return &FS{root: abs}, nil
}

// Root is the store directory.
func (f *FS) Root() string { return f.root }

// ErrOutsideStore is returned for paths that escape the store.
var ErrOutsideStore = errors.New("path escapes the store")

// resolve maps a store-relative path to an absolute one inside the store.
func (f *FS) resolve(rel string) (string, error) {
	if rel == "" || strings.ContainsRune(rel, 0) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %q", ErrOutsideStore, rel)
	}
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if p != f.root && !strings.HasPrefix(p, f.root+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %q", ErrOutsideStore, rel)
	}
	// A symlink inside the store must not lead out of it.
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if real != f.root && !strings.HasPrefix(real, f.root+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: %q", ErrOutsideStore, rel)
		}
	}
	return p, nil
}

// ReadFile implements kernel.Store. Missing files, directories and paths
// outside the store read as absent.
func (f *FS) ReadFile(rel string) (string, bool, error) {
	p, err := f.resolve(rel)
	if err != nil {
		return "", false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isDirErr(p) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("read %s: %w", p, err)
	}
	return string(b), true, nil
}

func isDirErr(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// WriteFile implements kernel.Store: an atomic replace under the
// reference-compatible lock on "<file>.lock".
func (f *FS) WriteFile(rel, text string) error {
	p, err := f.resolve(rel)
	if err != nil {
		return err
	}
	lock, err := filelock.Acquire(context.Background(), p, lockTimeout)
	if err != nil {
		return err
	}
	defer lock.Release()
	return atomicfile.WriteFile(p, []byte(text), 0o644)
}

// ListDecisions implements kernel.Store: stems of decisions/*.md in code
// point order.
func (f *FS) ListDecisions() ([]string, error) {
	files, err := f.decisionFiles()
	if err != nil {
		return nil, err
	}
	stems := make([]string, len(files))
	for i, fi := range files {
		stems[i] = strings.TrimSuffix(fi.name, ".md")
	}
	return stems, nil
}

type fileInfo struct {
	name  string
	size  int64
	mtime int64
}

func (f *FS) decisionFiles() ([]fileInfo, error) {
	dir := filepath.Join(f.root, kernel.DecisionsDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := make([]fileInfo, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		if !info.Mode().IsRegular() {
			if info.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
				continue
			} else {
				info = st
			}
		}
		out = append(out, fileInfo{name: name, size: info.Size(), mtime: info.ModTime().UnixNano()})
	}
	// os.ReadDir sorts by name in byte order, which is code-point order for
	// UTF-8; the reference sorts Python strings the same way.
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Corpus implements kernel.CorpusCache. The key covers every decision
// file's name, size and modification time, so any add, remove, rename or
// edit (atomic or in place) rebuilds; unchanged files are not re-read.
func (f *FS) Corpus() (*kernel.Corpus, error) {
	f.mu.Lock()
	if f.corpus != nil && f.watch != nil && time.Since(f.lastFull) < fullCheckInterval {
		changed, broken := f.watch.changed()
		if broken {
			f.watch.close()
			f.watch = nil
		}
		if !changed {
			c := f.corpus
			f.mu.Unlock()
			return c, nil
		}
	}
	if f.watch == nil {
		// Watch before listing, so a change made after the listing is
		// reported by the next drain.
		if w, err := newDirWatch(filepath.Join(f.root, kernel.DecisionsDir)); err == nil {
			f.watch = w
		}
	} else {
		f.watch.changed() // this pass re-reads everything anyway
	}
	f.lastFull = time.Now()
	f.mu.Unlock()
	files, err := f.decisionFiles()
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	var buf [16]byte
	for _, fi := range files {
		h.Write([]byte(fi.name))
		binary.LittleEndian.PutUint64(buf[:8], uint64(fi.size))
		binary.LittleEndian.PutUint64(buf[8:], uint64(fi.mtime))
		h.Write(buf[:])
	}
	key := h.Sum64()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corpus != nil && key == f.key {
		return f.corpus, nil
	}
	next := make(map[string]cachedFile, len(files))
	stems := make([]string, len(files))
	texts := make([]string, len(files))
	for i, fi := range files {
		stems[i] = strings.TrimSuffix(fi.name, ".md")
		if c, ok := f.parsed[fi.name]; ok && c.size == fi.size && c.mtime == fi.mtime {
			next[fi.name] = c
			texts[i] = c.text
			continue
		}
		b, err := os.ReadFile(filepath.Join(f.root, kernel.DecisionsDir, fi.name))
		if err != nil {
			texts[i] = "\x00missing"
			continue
		}
		next[fi.name] = cachedFile{size: fi.size, mtime: fi.mtime, text: string(b)}
		texts[i] = string(b)
	}
	f.parsed = next
	f.corpus = kernel.NewCorpus(stems, texts)
	f.key = key
	return f.corpus, nil
}

// ListMarkdown returns every *.md file of the store, store-relative.
func (f *FS) ListMarkdown() ([]string, error) {
	var out []string
	err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != f.root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, _ := filepath.Rel(f.root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// DecisionWriteLock serialises proposals between local writers (the
// reference's decisions/.lock).
func (f *FS) DecisionWriteLock(ctx context.Context) (*filelock.Lock, error) {
	return filelock.AcquirePath(ctx, filepath.Join(f.root, kernel.DecisionsDir, ".lock"), lockTimeout)
}

// RMWLock guards a read-modify-write of a root file ("<file>.rmwlock").
func (f *FS) RMWLock(ctx context.Context, rel string) (*filelock.Lock, error) {
	p, err := f.resolve(rel)
	if err != nil {
		return nil, err
	}
	return filelock.AcquirePath(ctx, p+".rmwlock", lockTimeout)
}
