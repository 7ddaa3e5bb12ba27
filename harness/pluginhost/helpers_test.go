package pluginhost

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
)

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
