package launch

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
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

// openManager loads the given manifests into a manager closed at test end.
func openManager(t testing.TB, opts Options, paths ...string) *pluginhost.Manager {
	t.Helper()
	opts.Paths = append(opts.Paths, paths...)
	opts.NoUserPlugins = true
	if opts.Logger == nil {
		opts.Logger = plugintest.Logger(t)
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

// blockStarted returns arguments for the test plugin's block tool that make
// it signal when the call reaches it (plugintest.StartSignal).
func blockStarted(t *testing.T) (json.RawMessage, <-chan struct{}) {
	t.Helper()
	fifo, started := plugintest.StartSignal(t)
	args, err := json.Marshal(map[string]string{"started": fifo})
	if err != nil {
		t.Fatal(err)
	}
	return args, started
}
