package pluginhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

func TestDigestCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is only trusted on Linux")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "plugin")
	cacheFile := filepath.Join(dir, "cache", "digests.json")
	write := func(content string) {
		if err := os.WriteFile(exe, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("version one")
	real1 := plugintest.Digest(t, exe)

	if got, err := NewDigests(cacheFile).Digest(exe); err != nil || got != real1 {
		t.Fatalf("first digest = %s, %v", got, err)
	}
	// Poison the shared file: a new process trusts it while the file is
	// unchanged, which proves the cache is used...
	var m map[string]digestEntry
	data, err := os.ReadFile(cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	e := m[exe]
	e.SHA256 = "cached"
	m[exe] = e
	data, _ = json.Marshal(m)
	if err := os.WriteFile(cacheFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := NewDigests(cacheFile).Digest(exe); got != "cached" {
		t.Fatalf("unchanged file: digest %s, want the cached value", got)
	}
	// ...and any change to the file, even one that keeps size and mtime,
	// is noticed.
	st, _ := os.Stat(exe)
	write("version two")
	if err := os.Chtimes(exe, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, _ := NewDigests(cacheFile).Digest(exe); got != plugintest.Digest(t, exe) {
		t.Fatalf("rewritten file: digest %s is stale", got)
	}
	// Replacing the file by rename (a new inode).
	tmp := exe + ".new"
	if err := os.WriteFile(tmp, []byte("version 3!!"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, exe); err != nil {
		t.Fatal(err)
	}
	c := NewDigests(cacheFile)
	if got, _ := c.Digest(exe); got != plugintest.Digest(t, exe) {
		t.Fatalf("replaced file: digest %s is stale", got)
	}
	// A nil cache always hashes.
	if got, _ := (*Digests)(nil).Digest(exe); got != plugintest.Digest(t, exe) {
		t.Fatal("nil cache")
	}
	// A damaged cache file is ignored.
	if err := os.WriteFile(cacheFile, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := NewDigests(cacheFile).Digest(exe); err != nil || got != plugintest.Digest(t, exe) {
		t.Fatalf("damaged cache: %s, %v", got, err)
	}
}

func TestDefaultDigestCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg-cache")
	if got := DefaultDigestCache(); got != "/xdg-cache/nexus/plugin-digests.json" {
		t.Errorf("with XDG_CACHE_HOME: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := DefaultDigestCache(); got != "/home/u/.cache/nexus/plugin-digests.json" {
		t.Errorf("without XDG_CACHE_HOME: %s", got)
	}
}
