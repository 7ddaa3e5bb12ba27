// Package testenv locates the shared test inputs that live beside the
// project (../shared): the nexus-core distribution and the Nauro goldens.
// The project never carries copies of those files.
package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once      sync.Once
	sharedDir string
)

// SharedDir returns the absolute path of the shared folder: $NEXUS_SHARED_DIR
// when set, else "../shared" relative to the module root. The test is
// skipped-with-failure (t.Fatal) when it cannot be found, because every
// contract test depends on it.
func SharedDir(t testing.TB) string {
	t.Helper()
	once.Do(func() { sharedDir = findShared() })
	if sharedDir == "" {
		t.Fatal("cannot find the shared folder: set NEXUS_SHARED_DIR or place it at ../shared beside the project root")
	}
	return sharedDir
}

// CoreDir returns the nexus-core 0.10.0 distribution directory.
func CoreDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "nexus-core-0.10.0")
}

// NauroFixtures returns the folder of Nauro golden cases.
func NauroFixtures(t testing.TB) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "fixtures", "nauro")
}

// ModuleRoot returns the directory holding go.mod, found by walking up from
// the working directory (go test runs in the package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root := moduleRoot()
	if root == "" {
		t.Fatal("cannot find go.mod above the working directory")
	}
	return root
}

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func findShared() string {
	if d := os.Getenv("NEXUS_SHARED_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
	}
	root := moduleRoot()
	if root == "" {
		return ""
	}
	// Nested modules (examples/plugins/...) also find the project's ../shared.
	for dir := root; ; {
		cand := filepath.Join(filepath.Dir(dir), "shared")
		if st, err := os.Stat(filepath.Join(cand, "nexus-core-0.10.0")); err == nil && st.IsDir() {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// LoadNauroFixture decodes the Nauro golden file name into v.
func LoadNauroFixture(t testing.TB, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(NauroFixtures(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
}
