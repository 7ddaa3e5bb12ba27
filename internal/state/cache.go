package state

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// A long-lived process (nexus mcp) keeps the parsed plan.json and
// tasks.json of its project, keyed by each file's identity, and re-reads a
// file only when that identity changes: repeated calls on unchanged state
// cost a stat, not a parse. Locks and atomic writes are unchanged; the
// cache only decides whether bytes on disk must be read again.
//
// A file's identity is its device, inode, size, modification and change
// times. File times have a coarse granularity (a kernel tick), so a file
// rewritten in place within the same tick as an earlier look can keep its
// identity. An entry last confirmed less than racyWindow after the file's
// last change is therefore "racy" (as git calls it): it is confirmed again
// by reading the file and comparing a hash of its bytes, which costs a read
// but no parse.
const racyWindow = 20 * time.Millisecond

// fileCache holds the parsed state files of one Store. Values in it are
// shared by every reader and must be treated as read-only; transactions
// get copies.
type fileCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	history HistoryMark // see history.go
}

type cacheEntry struct {
	id       fileID
	idKnown  bool // the platform gives an identity (else always racy)
	hash     uint64
	verified time.Time // when id and hash were last confirmed
	value    any       // *Plan, *Tasks or *[]TrackerEntry
	// items: what is known of each item of value (items.go); nil when
	// the file was decoded whole.
	items *itemSet
}

var hashSeed = maphash.MakeSeed()

func hashBytes(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// racy reports whether a change after e.verified could have left the
// file's identity unchanged.
func (e *cacheEntry) racy() bool {
	if !e.idKnown {
		return true
	}
	return e.verified.Sub(e.id.changed()) < racyWindow
}

func (c *fileCache) get(path string) *cacheEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[path]
}

func (c *fileCache) put(path string, e *cacheEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e == nil {
		delete(c.entries, path)
		return
	}
	c.entries[path] = e
}

// loaded is one read of a cached state file.
type loaded struct {
	value any
	items *itemSet
}

// load returns the parsed content of path: from the cache when the file
// is unchanged, else read (once) and decoded by doc, which re-uses what
// the cache knows of the items whose bytes did not change. A missing
// file is (nil, false, nil). The returned value is shared: do not modify
// it.
func (s *Store) loadCached(path string, doc itemDoc) (*loaded, bool, error) {
	c := s.cache
	e := c.get(path)
	if e != nil && !e.racy() {
		st, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			c.put(path, nil)
			return nil, false, nil
		}
		if err == nil {
			if id, ok := idOf(st); ok && id == e.id {
				return &loaded{e.value, e.items}, true, nil
			}
		}
	}
	b, id, idKnown, ok, err := readWithID(s.L, path, e)
	if err != nil || !ok {
		c.put(path, nil)
		return nil, ok, err
	}
	now := time.Now()
	if b == nil {
		// Same identity, same bytes (hashed as read, not kept).
		c.put(path, &cacheEntry{id: id, idKnown: idKnown, hash: e.hash, verified: now, value: e.value, items: e.items})
		return &loaded{e.value, e.items}, true, nil
	}
	h := hashBytes(b)
	if e != nil && e.hash == h {
		// Same bytes: keep the parsed value, note the identity it has now.
		c.put(path, &cacheEntry{id: id, idKnown: idKnown, hash: h, verified: now, value: e.value, items: e.items})
		return &loaded{e.value, e.items}, true, nil
	}
	var prevValue any
	var prev *itemSet
	if e != nil {
		prevValue, prev = e.value, e.items
	}
	v, items, err := doc.decode(b, prevValue, prev)
	if err != nil {
		c.put(path, nil)
		return nil, true, &CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()}
	}
	c.put(path, &cacheEntry{id: id, idKnown: idKnown, hash: h, verified: now, value: v, items: items})
	return &loaded{v, items}, true, nil
}

// remember records what a transaction just wrote to path, so the next read
// needs no parse (it is confirmed by hash while the write is recent).
func (s *Store) remember(path string, data []byte, v any, items *itemSet) {
	if s.cache == nil {
		return
	}
	if v == nil {
		s.cache.put(path, nil)
		return
	}
	st, err := os.Stat(path)
	if err != nil {
		s.cache.put(path, nil)
		return
	}
	id, idKnown := idOf(st)
	s.cache.put(path, &cacheEntry{id: id, idKnown: idKnown, hash: hashBytes(data), verified: time.Now(), value: v, items: items})
}

// readWithID reads a whole file of the layout (beneath its anchor, through
// the limit of its kind) and the identity of the very file read. When the
// file still has the identity of e (a racy entry being confirmed), its
// bytes are hashed as they are read and, when they are e's, not kept: b
// is nil. A write's next read confirms the file this way without holding
// a second copy of it.
func readWithID(l Layout, path string, e *cacheEntry) (b []byte, id fileID, idKnown, ok bool, err error) {
	f, fi, err := l.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fileID{}, false, false, nil
		}
		return nil, fileID{}, false, false, err
	}
	defer f.Close()
	id, idKnown = idOf(fi)
	if e != nil && idKnown && e.idKnown && id == e.id && fi.Size() <= LimitFor(path) {
		if same, err := hashesTo(safefile.Reader(f, path, LimitFor(path)), e.hash); err != nil {
			return nil, fileID{}, false, false, err
		} else if same {
			return nil, id, idKnown, true, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fileID{}, false, false, fmt.Errorf("read %s: %w", path, err)
		}
	}
	if b, err = safefile.ReadAll(f, path, fi.Size(), LimitFor(path)); err != nil {
		return nil, fileID{}, false, false, err
	}
	return b, id, idKnown, true, nil
}

var hashBuffers = sync.Pool{New: func() any { return new([256 << 10]byte) }}

// hashesTo reports whether r's bytes hash to sum (as hashBytes of all of
// them would), reading through a pooled buffer.
func hashesTo(r io.Reader, sum uint64) (bool, error) {
	buf := hashBuffers.Get().(*[256 << 10]byte)
	defer hashBuffers.Put(buf)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for {
		n, err := r.Read(buf[:])
		h.Write(buf[:n])
		if err == io.EOF {
			return h.Sum64() == sum, nil
		}
		if err != nil {
			return false, err
		}
	}
}
