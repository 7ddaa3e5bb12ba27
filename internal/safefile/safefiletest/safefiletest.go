// Package safefiletest plants the files a hostile repository ships in place
// of the ones nexus reads (a symlink to /dev/zero, a FIFO, a symlink out of
// the folder, a folder, a sparse giant, files at and just over a limit),
// and runs a read under a deadline, so a regression fails fast instead of
// hanging or exhausting the test process. Tests only.
package safefiletest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// Kind is one hostile replacement of a file.
type Kind string

// The kinds Plant knows.
const (
	DevZero    Kind = "symlink to /dev/zero"
	FIFO       Kind = "FIFO"
	LinkOut    Kind = "symlink out of the folder"
	Folder     Kind = "folder"
	Sparse     Kind = "8 GiB sparse file"
	AtLimit    Kind = "file of exactly the limit"
	OverLimit  Kind = "file one byte over the limit"
	RelDevZero Kind = "relative symlink to /dev/zero"
)

// Hostile are the kinds every reader must refuse (AtLimit is the one
// that must be read).
var Hostile = []Kind{DevZero, RelDevZero, FIFO, LinkOut, Folder, Sparse, OverLimit}

// Plant replaces path with k (its parent folders are created). fill is
// the byte AtLimit and OverLimit files repeat; limit their size bound (an
// OverLimit file over a 1 MiB limit is sparse).
// A LinkOut symlink points at a file outside every folder the test
// gave: a fresh temporary file holding "outside".
func Plant(t testing.TB, path string, k Kind, limit int64, fill byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(path)
	var err error
	switch k {
	case DevZero:
		err = os.Symlink("/dev/zero", path)
	case RelDevZero:
		rel, rerr := filepath.Rel(filepath.Dir(path), "/dev/zero")
		if rerr != nil {
			t.Fatal(rerr)
		}
		err = os.Symlink(rel, path)
	case FIFO:
		err = syscall.Mkfifo(path, 0o644)
	case LinkOut:
		out := filepath.Join(t.TempDir(), "outside")
		if err := os.WriteFile(out, []byte("outside"), 0o644); err != nil {
			t.Fatal(err)
		}
		err = os.Symlink(out, path)
	case Folder:
		err = os.Mkdir(path, 0o755)
	case Sparse:
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = f.Truncate(8 << 30)
			f.Close()
		}
	case OverLimit:
		if limit > 1<<20 {
			// Sparse: the size is what matters, and writing 128 MiB is slow.
			var f *os.File
			if f, err = os.Create(path); err == nil {
				err = f.Truncate(limit + 1)
				f.Close()
			}
			break
		}
		fallthrough
	case AtLimit:
		n := limit
		if k == OverLimit {
			n++
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = fill
		}
		err = os.WriteFile(path, b, 0o644)
	default:
		t.Fatalf("unknown kind %q", k)
	}
	if err != nil {
		t.Fatalf("plant %s at %s: %v", k, path, err)
	}
}

// Deadline is how long a refused read may take.
const Deadline = 5 * time.Second

// Within runs fn and fails the test when it has not returned within d
// (the call is left running: a hung read must fail the test, not hang
// the suite).
func Within(t testing.TB, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s (a FIFO or an endless file read?)", what, d)
	}
}

// Refused reports whether err is one of safefile's refusals (too large,
// not regular, leading out) — what a hostile file must produce.
func Refused(err error) bool {
	var tl *safefile.TooLargeError
	var nr *safefile.NotRegularError
	var es *safefile.EscapeError
	return errors.As(err, &tl) || errors.As(err, &nr) || errors.As(err, &es)
}
