package safefile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/safefile"
	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
)

const limit = 1 << 10

// readers are the ways to read one file of the folder dir.
var readers = []struct {
	name string
	read func(dir, name string) ([]byte, error)
	// follows: symlinks are followed wherever they lead (no root).
	follows bool
}{
	{"Read", func(dir, name string) ([]byte, error) { return safefile.Read(dir, name, limit) }, false},
	{"ReadIn", func(dir, name string) ([]byte, error) {
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return safefile.ReadIn(r, name, limit)
	}, false},
	{"ReadFile", func(dir, name string) ([]byte, error) {
		return safefile.ReadFile(filepath.Join(dir, name), limit)
	}, true},
	{"DirFS", func(dir, name string) ([]byte, error) {
		return fs.ReadFile(safefile.DirFS(dir, safefile.FSLimits{File: limit, Entries: 10, Depth: 4}), name)
	}, false},
	{"DirFS.Open", func(dir, name string) ([]byte, error) {
		f, err := safefile.DirFS(dir, safefile.FSLimits{File: limit, Entries: 10, Depth: 4}).Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(f)
	}, false},
}

func TestHostileFilesAreRefused(t *testing.T) {
	for _, rd := range readers {
		for _, k := range append(sft.Hostile, sft.AtLimit) {
			t.Run(rd.name+"/"+string(k), func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "sub", "tasks.json")
				sft.Plant(t, p, k, limit, 'x')
				var b []byte
				var err error
				sft.Within(t, sft.Deadline, rd.name, func() { b, err = rd.read(dir, "sub/tasks.json") })
				switch {
				case k == sft.AtLimit:
					if err != nil || len(b) != limit {
						t.Fatalf("a file of exactly the limit: got %d bytes, %v", len(b), err)
					}
				case k == sft.Folder && rd.name == "DirFS.Open":
					// fs.FS opens folders (fs.WalkDir needs it); reading one fails.
					if err == nil {
						t.Fatalf("reading a folder: %d bytes", len(b))
					}
				case k == sft.LinkOut && rd.follows:
					// By path: the user's own files follow their links.
					if err != nil || string(b) != "outside" {
						t.Fatalf("got %q, %v", b, err)
					}
				default:
					if !sft.Refused(err) {
						t.Fatalf("want a refusal, got %d bytes, err %v", len(b), err)
					}
					if !strings.Contains(err.Error(), p) && !strings.Contains(err.Error(), "tasks.json") {
						t.Errorf("the error does not name the file: %v", err)
					}
				}
			})
		}
	}
}

func TestErrorsSayWhatAndWhy(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		k    sft.Kind
		want []string
	}{
		{sft.FIFO, []string{"f.json is a FIFO", "not a regular file"}},
		{sft.Folder, []string{"f.json is a folder"}},
		{sft.OverLimit, []string{"larger than the limit of 1 KiB"}},
		{sft.DevZero, []string{"refusing to read", "f.json is a symlink to /dev/zero"}},
		{sft.LinkOut, []string{"refusing to read", "f.json is a symlink to", "outside " + dir}},
	} {
		sft.Plant(t, filepath.Join(dir, "f.json"), tc.k, limit, 'x')
		_, err := safefile.Read(dir, "f.json", limit)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not say %q", tc.k, err, w)
			}
		}
	}
	// By path, /dev/zero is reached and refused for what it is.
	sft.Plant(t, filepath.Join(dir, "z"), sft.DevZero, limit, 0)
	_, err := safefile.ReadFile(filepath.Join(dir, "z"), limit)
	var nr *safefile.NotRegularError
	if !errors.As(err, &nr) || nr.Kind != "a character device" {
		t.Errorf("by path, /dev/zero: %v", err)
	}
}

func TestMissingFileIsNotExist(t *testing.T) {
	dir := t.TempDir()
	for _, rd := range readers {
		if _, err := rd.read(dir, "nope.json"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v is not fs.ErrNotExist", rd.name, err)
		}
	}
}

func TestSymlinkInsideIsFollowed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "real.json"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.Symlink("../real.json", filepath.Join(dir, "a", "link.json"))
	os.Symlink("a", filepath.Join(dir, "b"))
	for _, rd := range readers {
		if b, err := rd.read(dir, "b/link.json"); err != nil || string(b) != "{}" {
			t.Errorf("%s: %q, %v", rd.name, b, err)
		}
	}
}

func TestReaderStopsAtTheLimit(t *testing.T) {
	for _, n := range []int{limit - 1, limit, limit + 1, 10 * limit} {
		b, err := io.ReadAll(safefile.Reader(bytes.NewReader(make([]byte, n)), "log", limit))
		var tl *safefile.TooLargeError
		if n <= limit && (err != nil || len(b) != n) {
			t.Errorf("%d bytes: got %d, %v", n, len(b), err)
		}
		if n > limit && !errors.As(err, &tl) {
			t.Errorf("%d bytes: %v, want TooLargeError", n, err)
		}
		if len(b) > limit {
			t.Errorf("%d bytes: read %d, more than the limit", n, len(b))
		}
	}
	// An endless source stops too.
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	sft.Within(t, sft.Deadline, "reading /dev/zero through Reader", func() {
		_, err = io.Copy(io.Discard, safefile.Reader(zero, "/dev/zero", 1<<20))
	})
	if _, ok := err.(*safefile.TooLargeError); !ok {
		t.Errorf("/dev/zero: %v", err)
	}
}

func TestReadDirBounds(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, string(rune('a'+i))), nil, 0o644)
	}
	if ents, err := safefile.ReadDir(dir, 5); err != nil || len(ents) != 5 || ents[0].Name() != "a" {
		t.Errorf("5 entries, limit 5: %d, %v", len(ents), err)
	}
	var tm *safefile.TooManyError
	if _, err := safefile.ReadDir(dir, 4); !errors.As(err, &tm) {
		t.Errorf("5 entries, limit 4: %v", err)
	}
	fsys := safefile.DirFS(dir, safefile.FSLimits{File: 1, Entries: 4, Depth: 2})
	if _, err := fs.ReadDir(fsys, "."); !errors.As(err, &tm) {
		t.Errorf("DirFS ReadDir, 5 entries, limit 4: %v", err)
	}
	if err := fs.WalkDir(fsys, ".", func(string, fs.DirEntry, error) error { return nil }); err != nil {
		// WalkDir hands the error to the function, which ignores it.
		t.Errorf("WalkDir: %v", err)
	}
	f, _ := fsys.Open(".")
	if _, err := f.(fs.ReadDirFile).ReadDir(-1); !errors.As(err, &tm) {
		t.Errorf("DirFS Open(.).ReadDir(-1): %v", err)
	}
	f.Close()
	ok := safefile.DirFS(dir, safefile.FSLimits{File: 1, Entries: 5, Depth: 2})
	f, _ = ok.Open(".")
	if ents, err := f.(fs.ReadDirFile).ReadDir(-1); err != nil || len(ents) != 5 {
		t.Errorf("DirFS Open(.).ReadDir(-1), limit 5: %d, %v", len(ents), err)
	}
	f.Close()
}

func TestWalkInBounds(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c", "d")
	os.MkdirAll(deep, 0o755)
	os.WriteFile(filepath.Join(deep, "f"), nil, 0o644)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "secret"), nil, 0o644)
	os.Symlink(out, filepath.Join(dir, "out"))
	os.Symlink("a", filepath.Join(dir, "in"))
	r, _ := os.OpenRoot(dir)
	defer r.Close()
	walk := func(lim safefile.WalkLimits) ([]string, []error) {
		var seen []string
		var errs []error
		safefile.WalkIn(r, ".", lim, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			seen = append(seen, p)
			return nil
		})
		return seen, errs
	}
	seen, errs := walk(safefile.WalkLimits{Depth: 10, Entries: 100})
	want := ". a a/b a/b/c a/b/c/d a/b/c/d/f in out"
	if strings.Join(seen, " ") != want || len(errs) != 0 {
		t.Errorf("walk: %q %v, want %q (symlinks listed, never entered)", seen, errs, want)
	}
	var tm *safefile.TooManyError
	if _, errs := walk(safefile.WalkLimits{Depth: 2, Entries: 100}); len(errs) != 1 || !errors.As(errs[0], &tm) {
		t.Errorf("depth 2: %v", errs)
	}
	if _, errs := walk(safefile.WalkLimits{Depth: 10, Entries: 4}); len(errs) != 1 || !errors.As(errs[0], &tm) {
		t.Errorf("4 entries: %v", errs)
	}
}
