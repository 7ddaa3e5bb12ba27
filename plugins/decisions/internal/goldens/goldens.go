// Package goldens locates the Nauro golden cases the decision store's tests
// compare against (plugins/decisions/testdata/nauro, refreshed from the
// reference by scripts/refresh-testdata.sh). It belongs to the store, not
// to nexus, so the store's tests need nothing of nexus's internal packages.
package goldens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the folder of Nauro golden cases: the first testdata/nauro
// found from the working directory upwards (go test runs in the package's
// own folder, somewhere below plugins/decisions).
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "testdata", "nauro")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no testdata/nauro above the working directory")
		}
		dir = parent
	}
}

// Load decodes the golden file name into v.
func Load(t testing.TB, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
}
