package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The binaries the tests drive are built once per test binary, the way
// `make build` builds them (static, stripped): go build was most of this
// package's test time when each test built its own. A test gets them
// hard-linked into a folder of its own, so it still owns the folder they
// stand in (what lies next to nexus matters: nexus-plugins is looked up
// there).
var testBuilds = map[string]struct {
	pkg    string // relative to this package
	static bool
}{
	"nexus":         {"../nexus", true},
	"nexus-full":    {".", true},
	"nexus-plugins": {"../nexus-plugins", true},
	"testplugin":    {"../../harness/pluginhost/launch/testdata/testplugin", false},
	"shellguard":    {"../../examples/plugins/shellguard", false},
	"bareplugin":    {"../../harness/pluginhost/launch/testdata/bareplugin", false},
	"rssrun":        {"../../internal/testenv/rssrun", true},
	"hello":         {"../../internal/proctime/hello", true},
}

var (
	buildDir  string
	buildMu   sync.Mutex
	buildOnce = map[string]*builtBinary{}
)

type builtBinary struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nexus-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// built returns the shared build of one of testBuilds.
func built(t testing.TB, name string) string {
	t.Helper()
	spec, ok := testBuilds[name]
	if !ok {
		t.Fatalf("no test build named %s", name)
	}
	buildMu.Lock()
	b := buildOnce[name]
	if b == nil {
		b = &builtBinary{}
		buildOnce[name] = b
	}
	buildMu.Unlock()
	b.once.Do(func() {
		b.path = filepath.Join(buildDir, name)
		args := []string{"build", "-o", b.path, "."}
		if spec.static {
			args = []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", b.path, "."}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = spec.pkg
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", spec.pkg, b.err, b.out)
	}
	return b.path
}

// install puts the shared build of name into dir (a hard link; a copy
// where linking fails) and returns its path there. nexus, the front, comes
// with nexus-full beside it, as installed.
func install(t testing.TB, dir, name string) string {
	t.Helper()
	if name == "nexus" {
		install(t, dir, "nexus-full")
	}
	src := built(t, name)
	dst := filepath.Join(dir, name)
	if err := os.Link(src, dst); err == nil {
		return dst
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// nexusAlone is nexus (with nexus-full) in a folder of its own, without
// the plugin host.
func nexusAlone(t testing.TB) string {
	t.Helper()
	return install(t, t.TempDir(), "nexus")
}

// buildNexus puts nexus into dir with the plugin host (nexus-plugins)
// beside it, as an installation has it.
func buildNexus(t testing.TB, dir string) string {
	t.Helper()
	install(t, dir, "nexus-plugins")
	return install(t, dir, "nexus")
}

// runNexus runs a binary in dir with exactly env and stdin, and returns
// its stdout, stderr and exit code. Every CLI test runs commands through it.
func runNexus(t testing.TB, bin, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
