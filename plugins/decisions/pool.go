package decisions

import (
	"slices"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/store"
)

// Limits of the open stores of one plugin process (docs/decisions.md,
// "Stores a long-running server holds").
const (
	// MaxWatchedStores: at most this many stores, the most recently used,
	// keep a directory watch (one inotify instance each on Linux; a user
	// has 128 by default, shared by every process).
	MaxWatchedStores = 8
	// WatchIdle: a store not used for this long releases its watch.
	WatchIdle = 5 * time.Minute
	// MaxOpenStores: beyond this many open stores, the least recently
	// used is closed (its folder handle and cache; the persistent index
	// keeps its next open cheap).
	MaxOpenStores = 32
)

// storePool holds the stores the plugin was asked about, so their caches
// live across calls. Every call holds its store (acquire, release): a store
// that was replaced under its path, or closed to stay within MaxOpenStores,
// is closed when its last call ends, never under a running one.
type storePool struct {
	maxWatched, maxOpen int
	idle                time.Duration
	now                 func() time.Time

	mu     sync.Mutex
	stores map[string]*pooled // by store root
	timer  *time.Timer        // the next idle sweep, while a watch may be held
}

type pooled struct {
	fs       *store.FS
	users    int       // calls using fs now
	lastUsed time.Time // when the last call began or ended
	watched  bool      // may hold a watch: used since its watch was last released
	gone     bool      // replaced or evicted: out of the pool, closed when users is 0
}

func newStorePool() *storePool {
	return &storePool{maxWatched: MaxWatchedStores, maxOpen: MaxOpenStores, idle: WatchIdle, now: time.Now, stores: map[string]*pooled{}}
}

// acquire returns the pool's store for the folder fresh has just opened:
// the one already open (fresh is closed) unless the folder at that path is
// now another directory (it was replaced), then fresh. release must be
// called when the call is done with the store.
func (sp *storePool) acquire(fresh *store.FS) (fs *store.FS, release func()) {
	sp.mu.Lock()
	var closeNow []*store.FS
	e := sp.stores[fresh.Root()]
	switch {
	case e != nil && e.fs.SameFolder(fresh):
		closeNow = append(closeNow, fresh)
	default:
		if e != nil {
			closeNow = append(closeNow, sp.drop(e)...)
		}
		e = &pooled{fs: fresh}
		sp.stores[fresh.Root()] = e
	}
	e.users++
	e.lastUsed, e.watched = sp.now(), true
	unwatch, evicted := sp.sweep()
	sp.mu.Unlock()
	sp.apply(unwatch, append(closeNow, evicted...))
	var once sync.Once
	return e.fs, func() { once.Do(func() { sp.release(e) }) }
}

func (sp *storePool) release(e *pooled) {
	sp.mu.Lock()
	e.users--
	e.lastUsed = sp.now()
	var closeNow []*store.FS
	if e.gone && e.users == 0 {
		closeNow = append(closeNow, e.fs)
	}
	unwatch, evicted := sp.sweep()
	sp.mu.Unlock()
	sp.apply(unwatch, append(closeNow, evicted...))
}

// apply closes and releases watches outside the pool's lock: releasing a
// watch waits for the store's lock, which a call on that store may hold.
func (sp *storePool) apply(unwatch, closeNow []*store.FS) {
	for _, f := range closeNow {
		f.Close()
	}
	for _, f := range unwatch {
		f.ReleaseWatch()
	}
}

// drop takes e out of the pool (mu held); it returns e's store when no
// call holds it, for the caller to close.
func (sp *storePool) drop(e *pooled) []*store.FS {
	if sp.stores[e.fs.Root()] == e {
		delete(sp.stores, e.fs.Root())
	}
	e.gone = true
	if e.users == 0 {
		return []*store.FS{e.fs}
	}
	return nil
}

// sweep applies the limits (mu held): the stores whose watches to release
// and those to close. It arms the idle timer while a watch may be held.
func (sp *storePool) sweep() (unwatch, closeNow []*store.FS) {
	byUse := make([]*pooled, 0, len(sp.stores))
	for _, e := range sp.stores {
		byUse = append(byUse, e)
	}
	slices.SortFunc(byUse, func(a, b *pooled) int { return b.lastUsed.Compare(a.lastUsed) })
	now := sp.now()
	var next time.Duration // until the first idle release still to come
	for i, e := range byUse {
		if i >= sp.maxOpen && e.users == 0 {
			closeNow = append(closeNow, sp.drop(e)...)
			continue
		}
		if !e.watched || e.users > 0 {
			continue
		}
		idleFor := now.Sub(e.lastUsed)
		if i >= sp.maxWatched || idleFor >= sp.idle {
			e.watched = false
			unwatch = append(unwatch, e.fs)
			continue
		}
		if left := sp.idle - idleFor; next == 0 || left < next {
			next = left
		}
	}
	if next > 0 && sp.timer == nil {
		sp.timer = time.AfterFunc(next, sp.idleSweep)
	}
	return unwatch, closeNow
}

// idleSweep runs from the timer: it releases the watches of stores idle
// for WatchIdle, then arms itself again if a watch may still be held.
func (sp *storePool) idleSweep() {
	sp.mu.Lock()
	sp.timer = nil
	unwatch, closeNow := sp.sweep()
	sp.mu.Unlock()
	sp.apply(unwatch, closeNow)
}
