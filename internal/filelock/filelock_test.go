package filelock

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAcquireExcludesAndTimesOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "plan.json")
	l, err := Acquire(context.Background(), file, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), file, 20*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("second Acquire: got %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), PathFor(file)) {
		t.Fatalf("timeout error %q does not name the lock file", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(context.Background(), file, time.Second)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
	var nilLock *Lock
	if err := nilLock.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireSerialisesGoroutines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "counter")
	var wg sync.WaitGroup
	inside := 0
	maxInside := 0
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				l, err := Acquire(context.Background(), file, 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside > maxInside {
					maxInside = inside
				}
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
		t.Fatalf("%d holders at once, want 1", maxInside)
	}
}
