package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// hostile are the files a cloned repository can put where the store reads
// one (the store keeps its own copy of the host's test planting, as it
// keeps its own bounded reads).
var hostile = []string{"dev-zero", "rel-dev-zero", "fifo", "link-out", "folder", "sparse", "over"}

func plant(t *testing.T, p, kind string, limit int64) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	var err error
	switch kind {
	case "dev-zero":
		err = os.Symlink("/dev/zero", p)
	case "rel-dev-zero":
		rel, _ := filepath.Rel(filepath.Dir(p), "/dev/zero")
		err = os.Symlink(rel, p)
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "link-out":
		out := filepath.Join(t.TempDir(), "out.md")
		os.WriteFile(out, []byte("outside"), 0o644)
		err = os.Symlink(out, p)
	case "folder":
		err = os.Mkdir(p, 0o755)
	case "sparse", "over", "at":
		size := limit + 1
		switch kind {
		case "sparse":
			size = 8 << 30
		case "at":
			size = limit
		}
		var f *os.File
		if f, err = os.Create(p); err == nil {
			err = f.Truncate(size)
			f.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// within fails the test when fn has not returned within 5 s.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return within 5 s", what)
	}
}

// Every read of the store refuses a hostile file fast, as a problem with
// that file (the rest of the store keeps working).
func TestStoreReadsRefuseHostileFiles(t *testing.T) {
	for _, kind := range hostile {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			plant(t, filepath.Join(dir, "decisions", "001-x.md"), kind, maxDecisionFile)
			plant(t, filepath.Join(dir, "project.md"), kind, maxStoreFile)
			var ok bool
			within(t, "ReadFile", func() { _, ok, err = s.ReadFile("project.md") })
			var pe *kernel.ProblemError
			if ok || kind != "folder" && !errors.As(err, &pe) {
				t.Errorf("ReadFile project.md: ok %v, %v", ok, err)
			}
			var c *kernel.Corpus
			within(t, "Corpus", func() { c, err = s.Corpus() })
			if err != nil {
				t.Fatalf("Corpus: %v", err)
			}
			if kind != "folder" && (len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Reason+c.Problems[0].File, "001-x.md")) {
				t.Errorf("corpus problems %+v", c.Problems)
			}
			within(t, "ListMarkdown", func() { _, err = s.ListMarkdown() })
			if err != nil {
				t.Errorf("ListMarkdown: %v", err)
			}
		})
	}
}

// At the limit a decision file is read; one byte more is refused.
func TestDecisionFileLimitBoundary(t *testing.T) {
	for _, kind := range []string{"at", "over"} {
		dir := t.TempDir()
		p := filepath.Join(dir, "001-x.md")
		plant(t, p, kind, maxDecisionFile)
		r, _ := os.OpenRoot(dir)
		_, err := readIn(r, "001-x.md", maxDecisionFile)
		r.Close()
		var tl *TooLargeError
		if (kind == "over") != errors.As(err, &tl) || kind == "at" && err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
}

// The control plane's files: $NAURO_HOME/registry.json and a
// repository's .nauro/config.json.
func TestControlFilesRefuseHostileFiles(t *testing.T) {
	for _, kind := range []string{"dev-zero", "fifo", "sparse", "folder"} {
		home := t.TempDir()
		plant(t, filepath.Join(home, RegistryFile), kind, maxControlFile)
		var err error
		within(t, "LoadRegistry", func() { _, err = LoadRegistry(home) })
		if err == nil {
			t.Errorf("registry %s: accepted", kind)
		}
		repo := t.TempDir()
		cfg := filepath.Join(repo, RepoConfigDir, RepoConfigFile)
		plant(t, cfg, kind, maxControlFile)
		within(t, "ReadRepoConfig", func() { _, err = ReadRepoConfig(cfg) })
		if err == nil {
			t.Errorf("repo config %s: accepted", kind)
		}
	}
}
