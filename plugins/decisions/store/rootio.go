package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// Every file of a store is opened beneath the store's root with os.Root:
// a symlink may point anywhere inside the store, but one whose target
// leaves it (a symlinked decisions/ or snapshots/, or a decision file that
// links out) is refused for reading and writing alike, with no window
// between a check and the use.

// ErrOutsideStore is returned for paths that escape the store.
var ErrOutsideStore = errors.New("path escapes the store")

// checkRel validates a store-relative path (slash-separated, local).
func checkRel(rel string) error {
	if rel == "" || strings.ContainsRune(rel, 0) || !fs.ValidPath(rel) {
		return fmt.Errorf("%w: %q", ErrOutsideStore, rel)
	}
	return nil
}

// escapeCulprit names the first component of rel that is a symlink whose
// target cannot be reached inside the store ("" when there is none).
func (f *FS) escapeCulprit(rel string) string {
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		st, err := f.r.Lstat(p)
		if err != nil {
			return ""
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if _, err := f.r.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return p
			}
		}
	}
	return ""
}

// explain turns an os.Root error about rel into one that names a
// symlink leading out of the store, when that is the cause.
func (f *FS) explain(rel string, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if c := f.escapeCulprit(rel); c != "" {
		target, _ := f.r.Readlink(c)
		where := "the store"
		if f.control {
			where = "the folder"
		}
		return fmt.Errorf("%w: %s is a symlink to %s, which is outside %s %s; replace it with a regular file or folder inside it", ErrOutsideStore, c, target, where, f.root)
	}
	return err
}

// writeAtomic replaces rel beneath the root: a temporary file in the same
// folder, fsync, rename, fsync of the folder.
func (f *FS) writeAtomic(rel string, data []byte) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	dir := path.Dir(rel)
	if dir != "." {
		if err := f.r.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, f.explain(dir, err))
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(rel)+".tmp-"+hex.EncodeToString(rnd[:]))
	t, err := f.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, f.explain(tmp, err))
	}
	_, werr := t.Write(data)
	if werr == nil {
		werr = t.Sync()
	}
	if cerr := t.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = f.r.Rename(tmp, rel)
	}
	if werr != nil {
		_ = f.r.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, f.explain(rel, werr))
	}
	if d, err := f.r.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// lock takes the reference-compatible flock on lockRel (created beneath
// the root when missing), waiting up to lockTimeout.
func (f *FS) lock(ctx context.Context, lockRel string) (*rootLock, error) {
	if err := checkRel(lockRel); err != nil {
		return nil, err
	}
	if dir := path.Dir(lockRel); dir != "." {
		if err := f.r.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, f.explain(dir, err))
		}
	}
	file, err := f.r.OpenFile(lockRel, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockRel, f.explain(lockRel, err))
	}
	ctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	for {
		ok, err := tryFlock(file)
		if err != nil {
			file.Close()
			return nil, fmt.Errorf("lock %s: %w", lockRel, err)
		}
		if ok {
			return &rootLock{f: file}, nil
		}
		select {
		case <-ctx.Done():
			file.Close()
			return nil, fmt.Errorf("lock %s: held by another process for more than %s", path.Join(f.root, lockRel), lockTimeout)
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// rootLock is a held store lock; closing the file releases the flock.
type rootLock struct{ f *os.File }

// Release unlocks. Safe on nil.
func (l *rootLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
