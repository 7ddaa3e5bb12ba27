// Package plugintest writes plugin manifests and routes plugin-host logs for
// tests of the plugin host and of what is built on it. It depends only on
// the manifest's file format, so the plugin host's own tests can use it.
package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// ManifestFile is the manifest's file name (pluginhost.ManifestFile).
const ManifestFile = "nexus-plugin.yaml"

// Spec describes a test manifest.
type Spec struct {
	Name       string
	Exe        string // absolute
	SHA        string // "" = the real digest
	Priority   int
	Tools      string // YAML lines under tools:, "" = Tools
	Events     string // YAML lines under events:
	Extra      string // more top-level YAML
	NoTools    bool
	ProjectDir bool
}

// Tools are the tools of the test plugin (testdata/testplugin).
const Tools = `
  - {name: echo, capability_classes: []}
  - {name: pid, capability_classes: []}
  - {name: block, capability_classes: [], timeout: 30s}
  - {name: hang, capability_classes: [], timeout: 300ms}
  - {name: env, capability_classes: []}
  - {name: stdin, capability_classes: []}
  - {name: config, capability_classes: [file_modification]}`

// Digest returns the hex SHA-256 of a file, as manifests write it.
func Digest(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WriteManifest writes <root>/<name>/nexus-plugin.yaml and returns its path.
func WriteManifest(t testing.TB, root string, s Spec) string {
	t.Helper()
	if s.SHA == "" {
		s.SHA = Digest(t, s.Exe)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nversion: \"0.0.1\"\nprotocol_version: 2\nexecutable: %s\nsha256: \"%s\"\npriority: %d\n", s.Name, s.Exe, s.SHA, s.Priority)
	if s.ProjectDir {
		b.WriteString("project_dir: true\n")
	}
	if !s.NoTools {
		tools := s.Tools
		if tools == "" {
			tools = Tools
		}
		b.WriteString("tools:" + tools + "\n")
	}
	if s.Events != "" {
		b.WriteString("events:\n" + s.Events + "\n")
	}
	b.WriteString(s.Extra)
	dir := filepath.Join(root, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ManifestFile)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Logger sends a plugin host's log to the test's log.
func Logger(t testing.TB) hclog.Logger {
	w := &writer{t: t}
	t.Cleanup(func() { w.done.Store(true) })
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: hclog.Warn, Output: w})
}

// writer logs through t until the test ends (t.Log panics after that).
type writer struct {
	t    testing.TB
	done atomic.Bool
}

func (w *writer) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// StartSignal makes a FIFO for the test plugin's block tool (its "started"
// argument): the plugin opens it when the call reaches it, and the channel
// closes then. Tests wait on it instead of sleeping and hoping.
func StartSignal(t testing.TB) (fifo string, started <-chan struct{}) {
	t.Helper()
	fifo = filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() {
		if _, err := os.ReadFile(fifo); err == nil { // opens when the plugin does
			close(ch)
		}
	}()
	return fifo, ch
}

// WaitStarted waits for a StartSignal, up to 10 s.
func WaitStarted(t testing.TB, started <-chan struct{}) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the plugin")
	}
}
