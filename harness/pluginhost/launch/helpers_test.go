package launch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// built caches plugin binaries built by `go build` once per test run.
var (
	buildMu  sync.Mutex
	built    = map[string]string{}
	buildDir string
)

// buildPlugin builds the Go package in dir (relative to this package) and
// returns the binary's path. moduleDir, when set, runs the build there
// (for a separate module such as the example plugin).
func buildPlugin(t testing.TB, dir string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[dir]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "pluginhost-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(buildDir, filepath.Base(abs))
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = abs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, stderr.String())
	}
	built[dir] = out
	return out
}

func TestMain(m *testing.M) {
	if os.Getenv(helperHostEnv) != "" {
		runHelperHost()
		return
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func testPluginBinary(t testing.TB) string {
	return buildPlugin(t, "testdata/testplugin")
}

func mustDigest(t testing.TB, path string) string {
	t.Helper()
	d, err := FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// spec describes a test manifest.
type spec struct {
	name       string
	exe        string // absolute
	sha        string // "" = the real digest
	priority   int
	tools      string // YAML lines under tools:, "" = the test plugin's tools
	events     string // YAML lines under events:
	extra      string // more top-level YAML
	noTools    bool
	projectDir bool
}

const testTools = `
  - {name: echo, capability_classes: []}
  - {name: pid, capability_classes: []}
  - {name: block, capability_classes: [], timeout: 30s}
  - {name: hang, capability_classes: [], timeout: 300ms}
  - {name: env, capability_classes: []}
  - {name: stdin, capability_classes: []}
  - {name: config, capability_classes: [file_modification]}`

// writeManifest writes <root>/<name>/nexus-plugin.yaml and returns its path.
func writeManifest(t testing.TB, root string, s spec) string {
	t.Helper()
	if s.sha == "" {
		s.sha = mustDigest(t, s.exe)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nversion: \"0.0.1\"\nprotocol_version: 2\nexecutable: %s\nsha256: \"%s\"\npriority: %d\n", s.name, s.exe, s.sha, s.priority)
	if s.projectDir {
		b.WriteString("project_dir: true\n")
	}
	if !s.noTools {
		tools := s.tools
		if tools == "" {
			tools = testTools
		}
		b.WriteString("tools:" + tools + "\n")
	}
	if s.events != "" {
		b.WriteString("events:\n" + s.events + "\n")
	}
	b.WriteString(s.extra)
	dir := filepath.Join(root, s.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ManifestFile)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testLogger sends the manager's log to the test's log.
func testLogger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.done.Store(true) })
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: hclog.Warn, Output: w})
}

// testWriter logs through t until the test ends (t.Log panics after that).
type testWriter struct {
	t    testing.TB
	done atomic.Bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// openManager loads the given manifests into a manager closed at test end.
func openManager(t testing.TB, opts Options, paths ...string) *pluginhost.Manager {
	t.Helper()
	opts.Paths = append(opts.Paths, paths...)
	opts.NoUserPlugins = true
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems()) > 0 {
		t.Fatalf("manifest problems: %v", m.Problems())
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// killAndWait SIGKILLs pid and waits until it is gone.
func killAndWait(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d survived SIGKILL", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
