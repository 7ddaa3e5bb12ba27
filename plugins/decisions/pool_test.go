package decisions

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/store"
)

// inotifyInstances counts this process's inotify descriptors (-1 off
// Linux, where the store watches nothing).
func inotifyInstances(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// poolStores makes n store folders with one decision each.
func poolStores(t *testing.T, n int) []string {
	t.Helper()
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
		os.MkdirAll(filepath.Join(dirs[i], "decisions"), 0o755)
		writeDecision(t, dirs[i], "001-a.md", fmt.Sprintf("Store %02d uses Redis", i))
	}
	return dirs
}

func writeDecision(t *testing.T, dir, name, title string) {
	t.Helper()
	doc := fmt.Sprintf("---\ndate: 2026-04-16\nconfidence: high\n---\n\n# %s \u2014 %s\n\n## Decision\n\nRationale.\n", name[:3], title)
	if err := os.WriteFile(filepath.Join(dir, "decisions", name), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// use is one call on the store at dir: the titles its corpus lists, and
// whether the store was watched during the call.
func use(t *testing.T, sp *storePool, dir string) (fs *store.FS, titles []string, watched bool) {
	t.Helper()
	fresh, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, release := sp.acquire(fresh)
	defer release()
	c, err := fs.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Entries {
		titles = append(titles, e.D.Title)
	}
	return fs, titles, fs.Watching()
}

// TestStorePoolLimits (issue 22): a long-running server watches at most
// maxWatched stores (the most recently used), releases the watch of a
// store idle for the idle time, and closes the least recently used store
// beyond maxOpen. A store whose watch was released or that was closed
// answers right when used again, edits made meanwhile included, and is
// watched again.
func TestStorePoolLimits(t *testing.T) {
	for _, tc := range []struct {
		name                string
		stores              int
		maxWatched, maxOpen int
		idle                time.Duration
		watched, open       int // after using every store once, in order
	}{
		{"21 stores, default limits", 21, MaxWatchedStores, MaxOpenStores, WatchIdle, MaxWatchedStores, 21},
		{"LRU watches", 5, 2, 10, time.Hour, 2, 5},
		{"LRU open stores", 6, 2, 3, time.Hour, 2, 3},
		{"idle watches", 3, 10, 10, 30 * time.Millisecond, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := inotifyInstances(t)
			sp := newStorePool()
			sp.maxWatched, sp.maxOpen, sp.idle = tc.maxWatched, tc.maxOpen, tc.idle
			dirs := poolStores(t, tc.stores)
			fss := make([]*store.FS, len(dirs))
			for i, d := range dirs {
				fss[i], _, _ = use(t, sp, d)
			}
			t.Cleanup(func() {
				for _, f := range fss {
					f.Close()
				}
			})
			if tc.idle < time.Second {
				deadline := time.Now().Add(5 * time.Second)
				for watching(fss) > tc.watched && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if got := watching(fss); got != tc.watched {
				t.Errorf("%d stores watched, want %d", got, tc.watched)
			}
			if n := inotifyInstances(t); n >= 0 && n-base != tc.watched {
				t.Errorf("%d inotify instances, want %d", n-base, tc.watched)
			}
			sp.mu.Lock()
			open := len(sp.stores)
			sp.mu.Unlock()
			if open != tc.open {
				t.Errorf("%d stores open, want %d", open, tc.open)
			}
			// The first store (unwatched, or closed): edited in place with
			// its times put back, then given a second decision; each next
			// use answers right and watches it again.
			p := filepath.Join(dirs[0], "decisions", "001-a.md")
			st, _ := os.Stat(p)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "uses Redis", "uses Mongo", 1)), 0o644)
			os.Chtimes(p, st.ModTime(), st.ModTime())
			for _, step := range []struct {
				change func()
				want   string
			}{
				{func() {}, "Store 00 uses Mongo"},
				{func() { writeDecision(t, dirs[0], "002-b.md", "Second decision") }, "Store 00 uses Mongo|Second decision"},
			} {
				step.change()
				fs, titles, watched := use(t, sp, dirs[0])
				fss = append(fss, fs)
				if strings.Join(titles, "|") != step.want {
					t.Errorf("used again: %q, want %q", strings.Join(titles, "|"), step.want)
				}
				if !watched && base >= 0 {
					t.Error("the store used again is not watched")
				}
			}
		})
	}
}

func watching(fss []*store.FS) int {
	n := 0
	for _, f := range fss {
		if f.Watching() {
			n++
		}
	}
	return n
}

// TestStorePoolConcurrent: calls on more stores than the limits allow, from
// several goroutines at once, with idle releases firing meanwhile: every
// answer is right and nothing is closed under a call (run with -race).
func TestStorePoolConcurrent(t *testing.T) {
	sp := newStorePool()
	sp.maxWatched, sp.maxOpen, sp.idle = 2, 3, 5*time.Millisecond
	dirs := poolStores(t, 6)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 60 {
				k := (g + i) % len(dirs)
				fresh, err := store.Open(dirs[k])
				if err != nil {
					errs <- err
					return
				}
				fs, release := sp.acquire(fresh)
				c, err := fs.Corpus()
				if err == nil && (len(c.Entries) != 1 || c.Entries[0].D.Title != fmt.Sprintf("Store %02d uses Redis", k)) {
					err = fmt.Errorf("store %d answered %+v", k, c.Entries)
				}
				release()
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(sp.stores) > sp.maxOpen {
		t.Errorf("%d stores open, limit %d", len(sp.stores), sp.maxOpen)
	}
}
