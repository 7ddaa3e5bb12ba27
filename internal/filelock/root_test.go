package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAcquireAtExcludesTimesOutAndInteroperates(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l, err := AcquireAt(context.Background(), root, "state/plan.json.lock", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireAt(context.Background(), root, "state/plan.json.lock", 20*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "plan.json.lock") {
		t.Fatalf("second AcquireAt: %v, want ErrTimeout naming the lock", err)
	}
	// The path-based lock sees the same flock.
	if _, err := AcquirePath(context.Background(), filepath.Join(dir, "state/plan.json.lock"), 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("AcquirePath while AcquireAt holds: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquirePath(context.Background(), filepath.Join(dir, "state/plan.json.lock"), time.Second)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l2.Release()
}

func TestAcquireAtSerialisesGoroutines(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var mu sync.Mutex
	inside, maxInside := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				l, err := AcquireAt(context.Background(), root, "x.lock", 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				maxInside = max(maxInside, inside)
				mu.Unlock()
				time.Sleep(50 * time.Microsecond)
				mu.Lock()
				inside--
				mu.Unlock()
				l.Release()
			}
		}()
	}
	wg.Wait()
	if maxInside != 1 {
		t.Fatalf("%d holders at once", maxInside)
	}
}

// A lock file or folder that is a symlink out of the root is refused, and
// nothing is created outside.
func TestAcquireAtRefusesLinksOut(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	os.Symlink(filepath.Join(out, "made.lock"), filepath.Join(dir, "a.lock")) // dangling
	os.Symlink(out, filepath.Join(dir, "state"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"a.lock", "state/b.lock"} {
		if l, err := AcquireAt(context.Background(), root, name, time.Second); err == nil {
			l.Release()
			t.Errorf("%s: locked through a symlink out of the root", name)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("created outside: %v", entries)
	}
}
