package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"syscall"
	"time"
)

// AcquireAt locks the lock file name beneath root (created, with its
// directory, when missing), waiting up to timeout (DefaultTimeout when
// timeout <= 0). The file is opened through the root, so a lock file or
// folder that is a symlink leading out of the root is refused rather than
// created or opened outside it.
func AcquireAt(ctx context.Context, root *os.Root, name string, timeout time.Duration) (*Lock, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create lock directory for %s: %w", name, err)
		}
	}
	// O_NONBLOCK: a FIFO planted as the lock file cannot hang the open.
	f, err := root.OpenFile(name, os.O_RDONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	lockErr := func() error {
		try := func() (bool, error) {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			switch {
			case err == nil:
				return true, nil
			case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
				return false, nil
			}
			return false, err
		}
		if ok, err := try(); ok || err != nil {
			return err
		}
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		tick := time.NewTicker(retryDelay)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-deadline.C:
				full := path.Join(root.Name(), name)
				return fmt.Errorf("%w: %s is held by another process for more than %s; if no nexus process is running, the holder died uncleanly: check with `fuser %s`", ErrTimeout, full, timeout, full)
			case <-tick.C:
				if ok, err := try(); ok || err != nil {
					return err
				}
			}
		}
	}()
	if lockErr != nil {
		f.Close()
		if errors.Is(lockErr, ErrTimeout) {
			return nil, lockErr
		}
		return nil, fmt.Errorf("lock %s: %w", name, lockErr)
	}
	return &Lock{f: f}, nil
}
