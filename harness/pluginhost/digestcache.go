package pluginhost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/safefile"
)

// fileID identifies one version of a file: any write, chmod or replacement
// changes the change time or the inode, and the change time cannot be set
// by an unprivileged process.
type fileID struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

type digestEntry struct {
	ID     fileID `json:"id"`
	SHA256 string `json:"sha256"`
}

// DefaultDigestCache is where a program should keep Options.DigestCache:
// $XDG_CACHE_HOME/nexus/plugin-digests.json, else
// ~/.cache/nexus/plugin-digests.json ("" when neither can be determined).
func DefaultDigestCache() string {
	return userPath("XDG_CACHE_HOME", ".cache", "plugin-digests.json")
}

// maxDigestEntries bounds the cache file.
const maxDigestEntries = 256

// Digests remembers executables' digests by file identity: in memory
// for one Manager, and, when path is set, in a file shared by every nexus
// process of the user, so that a hook process does not re-hash an unchanged
// plugin binary (tens of milliseconds for a Go binary).
type Digests struct {
	path string

	mu     sync.Mutex
	loaded bool
	mem    map[string]digestEntry // by absolute executable path
}

// NewDigests returns a digest memo backed by the shared file at path ("":
// this process only).
func NewDigests(path string) *Digests {
	return &Digests{path: path, mem: map[string]digestEntry{}}
}

// Digest returns the executable's SHA-256, from the cache when its identity
// is unchanged.
func (c *Digests) Digest(exe string) (string, error) {
	if c == nil {
		return FileSHA256(exe)
	}
	st, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	id, ok := identity(st)
	if !ok {
		return FileSHA256(exe)
	}
	c.mu.Lock()
	c.loadLocked()
	e, hit := c.mem[exe]
	c.mu.Unlock()
	if hit && e.ID == id {
		return e.SHA256, nil
	}
	sum, err := FileSHA256(exe)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.mem[exe] = digestEntry{ID: id, SHA256: sum}
	c.mu.Unlock()
	c.store(exe, digestEntry{ID: id, SHA256: sum})
	return sum, nil
}

func (c *Digests) loadLocked() {
	if c.loaded || c.path == "" {
		c.loaded = true
		return
	}
	c.loaded = true
	for k, v := range readDigestFile(c.path) {
		c.mem[k] = v
	}
}

func readDigestFile(path string) map[string]digestEntry {
	data, err := safefile.ReadFile(path, maxDigestFile)
	if err != nil {
		return nil
	}
	var m map[string]digestEntry
	if json.Unmarshal(data, &m) != nil {
		return nil // a damaged cache is only a cache: rebuilt on the next write
	}
	return m
}

// store merges one entry into the shared file. Failures are ignored: the
// cache only saves time.
func (c *Digests) store(exe string, e digestEntry) {
	if c.path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	lock, err := filelock.Acquire(context.Background(), c.path, 2*time.Second)
	if err != nil {
		return
	}
	defer lock.Release()
	m := readDigestFile(c.path)
	if m == nil {
		m = map[string]digestEntry{}
	}
	m[exe] = e
	for k := range m {
		if _, err := os.Stat(k); err != nil || len(m) > maxDigestEntries {
			delete(m, k)
		}
	}
	m[exe] = e
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	_ = atomicfile.WriteFileNoSync(c.path, data, 0o600)
}
