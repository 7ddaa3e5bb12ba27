// Package filelock serialises read-modify-write cycles across processes with
// an advisory flock(2) on a sidecar "<file>.lock" file.
//
// The lock is taken on a sidecar rather than on the data file because atomic
// writes replace the data file's inode: a lock held on the old inode would
// protect nothing. The kernel releases flock locks when the holder dies, so a
// SIGKILLed process never leaves a stale lock behind (the sidecar file itself
// stays on disk, harmlessly).
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// DefaultTimeout bounds how long Acquire waits for another process.
const DefaultTimeout = 10 * time.Second

// retryDelay is how often a contended lock is retried. Short, because the
// critical sections guarded here are a read, a small edit and a rename.
const retryDelay = 500 * time.Microsecond

// ErrTimeout is wrapped by the error Acquire returns when the lock stays
// held by someone else for the whole timeout.
var ErrTimeout = errors.New("lock timeout")

// Lock is a held lock. Release it exactly once.
type Lock struct {
	fl *flock.Flock
	f  *os.File // AcquireAt's lock: closing the file releases it
}

// PathFor returns the sidecar lock path guarding file.
func PathFor(file string) string { return file + ".lock" }

// Acquire locks the sidecar of file, waiting up to timeout (DefaultTimeout
// when timeout <= 0). The sidecar's directory is created when missing.
func Acquire(ctx context.Context, file string, timeout time.Duration) (*Lock, error) {
	return AcquirePath(ctx, PathFor(file), timeout)
}

// AcquirePath locks the given lock file itself (use it when the sidecar does
// not sit next to the data file).
func AcquirePath(ctx context.Context, lockPath string, timeout time.Duration) (*Lock, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		return nil, fmt.Errorf("create lock directory for %s: %w", lockPath, err)
	}
	fl := flock.New(lockPath)
	// Fast path: uncontended locks are the norm on the hook path.
	if ok, err := fl.TryLock(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	} else if ok {
		return &Lock{fl: fl}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, retryDelay)
	if ok {
		return &Lock{fl: fl}, nil
	}
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: %s is held by another process for more than %s; if no nexus process is running, the holder died uncleanly: check with `fuser %s`", ErrTimeout, lockPath, timeout, lockPath)
	}
	return nil, fmt.Errorf("lock %s: %w", lockPath, err)
}

// Release unlocks. It is safe to call on a nil Lock.
func (l *Lock) Release() error {
	if l != nil && l.f != nil {
		f := l.f
		l.f = nil
		return f.Close()
	}
	if l == nil || l.fl == nil {
		return nil
	}
	fl := l.fl
	l.fl = nil
	if err := fl.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", fl.Path(), err)
	}
	return nil
}
