//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// python is Debian's interpreter, which has python3-grpcio (PyPI is not
// reachable, so a pyenv or virtualenv python would lack it).
const python = "/usr/bin/python3"

// TestE2EPythonPlugin runs the example plugin in another language
// (examples/plugins/pyecho: Python, grpcio, written from docs/plugins.md)
// through the built nexus: verify, tools over MCP, its data folder,
// cancellation reaching it, and how long `nexus mcp` takes to exit with it,
// serving go-plugin's GRPCController and without it. Its prerequisites come
// from scripts/e2e/setup.d/30-python-grpc.sh; a missing one fails the test.
func TestE2EPythonPlugin(t *testing.T) {
	if out, err := exec.Command(python, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import grpc and protobuf (%v: %s); run scripts/e2e/setup.d/30-python-grpc.sh (apt-get install python3-grpcio python3-protobuf)", python, err, out)
	}
	for _, tool := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run scripts/e2e/setup.d/30-python-grpc.sh (apt-get install protobuf-compiler protobuf-compiler-grpc)", tool)
		}
	}
	example, err := filepath.Abs("../../examples/plugins/pyecho")
	if err != nil {
		t.Fatal(err)
	}
	protoDir, err := filepath.Abs("../../plugins/sdk/proto")
	if err != nil {
		t.Fatal(err)
	}
	// The committed manifest's digest is the committed script's: the
	// example installs as it is.
	manifest, err := os.ReadFile(filepath.Join(example, pluginhost.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := pluginhost.FileSHA256(filepath.Join(example, "plugin.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), `sha256: "`+sum+`"`) {
		t.Fatalf("examples/plugins/pyecho/nexus-plugin.yaml does not carry plugin.py's digest %s; update it", sum)
	}

	f := newPluginFixture(t)
	env := f.env(t)
	install := func(proj, extra string) {
		dir := filepath.Join(pluginhost.ProjectPluginDir(proj), "pyecho")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"plugin.py", "generate.sh"} {
			data, err := os.ReadFile(filepath.Join(example, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, pluginhost.ManifestFile), append(manifest, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		gen := exec.Command("sh", filepath.Join(dir, "generate.sh"))
		gen.Env = append(os.Environ(), "PROTO_DIR="+protoDir)
		if out, err := gen.CombinedOutput(); err != nil {
			t.Fatalf("generate.sh: %v\n%s", err, out)
		}
	}

	proj := f.project(t, "decisions:\n  enabled: false\n")
	install(proj, "")

	out, errOut, code := runNexus(t, f.nexus, proj, env, "", "plugin", "verify", "pyecho")
	if code != 0 || !strings.Contains(out, "pyecho: ok") || !strings.Contains(out, "tool         pyecho_slow") {
		t.Fatalf("verify: %d\n%s\n%s", code, out, errOut)
	}

	s := startMCP(t, f.nexus, proj, env)
	names := s.toolNames()
	for _, want := range []string{"pyecho_echo", "pyecho_count", "pyecho_slow"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	if text, isErr := s.call("pyecho_echo", map[string]any{"text": "hello from Go"}, nil); isErr || text != "hello from Go" {
		t.Fatalf("echo: %v %q", isErr, text)
	}
	for want := 1; want <= 2; want++ {
		if text, isErr := s.call("pyecho_count", map[string]any{}, nil); isErr || text != strconv.Itoa(want) {
			t.Fatalf("count: %v %q, want %d", isErr, text, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(proj, ".nexus", "state", "nexus", "plugins", "pyecho", "count")); err != nil || string(data) != "2" {
		t.Fatalf("the data folder holds %q, %v", data, err)
	}
	// Cancellation reaches a Python plugin's call too.
	id := s.send("tools/call", map[string]any{"name": "pyecho_slow", "arguments": map[string]any{"seconds": 30}})
	time.Sleep(100 * time.Millisecond)
	sent := time.Now()
	s.notify("notifications/cancelled", map[string]any{"requestId": id})
	re := regexp.MustCompile(`pyecho: slow cancelled at (\d+)`)
	var m []string
	for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		m = re.FindStringSubmatch(s.stderr.String())
	}
	if m == nil {
		t.Fatalf("the cancellation never reached the plugin; stderr:\n%s", s.stderr)
	}
	at, _ := strconv.ParseInt(m[1], 10, 64)
	t.Logf("python plugin: cancellation seen %s after the notification", time.Unix(0, at).Sub(sent).Round(100*time.Microsecond))
	// Its log reached nexus's stderr at info, with its fields.
	if !strings.Contains(s.stderr.String(), "plugins.pyecho: configured: data_dir=") {
		t.Errorf("the plugin's JSON log line is not in nexus's log:\n%s", s.stderr)
	}
	t0 := time.Now()
	s.closeStdin()
	withController := time.Since(t0)

	// The same plugin without go-plugin's controller: nexus stops it with
	// SIGTERM instead of waiting 2 s for an exit that would not come.
	bare := f.project(t, "decisions:\n  enabled: false\n")
	install(bare, "env: [PYECHO_NO_CONTROLLER]\n")
	s = startMCP(t, f.nexus, bare, append(env, "PYECHO_NO_CONTROLLER=1"))
	if text, isErr := s.call("pyecho_echo", map[string]any{"text": "x"}, nil); isErr || text != "x" {
		t.Fatalf("echo without the controller: %v %q", isErr, text)
	}
	t0 = time.Now()
	s.closeStdin()
	withoutController := time.Since(t0)
	t.Logf("nexus mcp exit after end of input, python plugin with GRPCController: %s, without: %s",
		withController.Round(time.Millisecond), withoutController.Round(time.Millisecond))
	for what, d := range map[string]time.Duration{"with": withController, "without": withoutController} {
		if d > time.Second {
			t.Errorf("nexus mcp took %s to exit %s the controller; want well under go-plugin's 2 s wait", d, what)
		}
	}
	if strings.Contains(s.stderr.String(), "failed to exit gracefully") {
		t.Errorf("stopping warned:\n%s", s.stderr)
	}
}
