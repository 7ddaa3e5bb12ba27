// Package testenv locates the test inputs the repository carries: the
// vendored nexus-core distribution (third_party/nexus-core/dist, the same
// files nexus embeds), refreshed from upstream by
// scripts/refresh-testdata.sh; tests never read anything outside the
// repository. It also loads a project's configuration the way tests need
// it (the project file only), and copies folders (CopyTree). (The decision
// store's Nauro goldens are its own: plugins/decisions/internal/goldens.)
package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/config"
)

// ProjectConfig writes yaml (when not empty) as dir's project file and
// loads the configuration from that file alone: no user file and no NEXUS_*
// variables, so the developer's own settings cannot change a test.
func ProjectConfig(t testing.TB, dir, yaml string) *config.Config {
	t.Helper()
	if yaml != "" {
		if err := os.MkdirAll(filepath.Join(dir, ".nexus"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, config.ProjectFile), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(config.Options{ProjectDir: dir, NoUserFile: true, IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// CoreDir returns the vendored nexus-core 0.10.0 distribution directory.
func CoreDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(ModuleRoot(t), "third_party", "nexus-core", "dist")
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

// CopyTree copies the folder from to to as `cp -r` does: new folders and
// files (new inodes), the same bytes.
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	if err := CopyDir(from, to); err != nil {
		t.Fatal(err)
	}
}

// CopyDir is CopyTree for code that has no testing.TB (a goroutine of
// its own): it returns the error.
func CopyDir(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

// Golden compares got with the golden file path, or writes it when update
// (a test's -update flag) is set: the one way the command tests keep
// reviewed output.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if string(got) != string(want) {
		t.Errorf("%s changed (review it, then run the test with -update):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the lines of got that differ from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}
