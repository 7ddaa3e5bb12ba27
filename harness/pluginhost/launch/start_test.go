package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

// captureLog is a logger at level whose lines a test can read.
type captureLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captureLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *captureLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func newCaptureLog(level hclog.Level) (*captureLog, hclog.Logger) {
	c := &captureLog{}
	return c, hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: level, Output: c})
}

func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A plugin that never answers the handshake is left out after its own
// start deadline, named with what happened; every other plugin is served.
func TestHungPluginDoesNotSinkTheOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hung := script(t, dir, "hung.sh", "echo waiting for nothing >&2\nexec sleep 60\n")
	good := testPluginBinary(t)
	m := openManager(t, Options{},
		plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "hung", Exe: hung, Tools: "\n  - {name: nap, capability_classes: []}", Extra: "start_timeout: 700ms\n"}),
		plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "good", Exe: good}))
	t0 := time.Now()
	tools, err := m.Tools(context.Background())
	took := time.Since(t0)
	if len(tools) != 7 || tools[0].Plugin != "good" {
		t.Fatalf("tools = %d (%v), want the good plugin's 7", len(tools), err)
	}
	if took > 700*time.Millisecond+time.Second { // not 10 s: the others do not wait for it
		t.Errorf("Tools took %s, want about the hung plugin's 700ms start deadline", took)
	}
	for _, want := range []string{"plugin hung did not start", "no handshake within 700ms", "killed", "waiting for nothing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "good") {
		t.Errorf("error mentions the plugin that started: %v", err)
	}
}

// A plugin that dies at start is reported with its exit status and last
// stderr lines, without go-plugin's "failed to exit gracefully" warning.
func TestPluginDyingAtStartReportsStatusAndStderr(t *testing.T) {
	dir := t.TempDir()
	exe := script(t, dir, "dies.sh", "echo first line >&2\necho 'cannot open config.toml' >&2\nexit 3\n")
	logs, log := newCaptureLog(hclog.Debug)
	m := openManager(t, Options{Logger: log}, plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "dies", Exe: exe}))
	_, err := m.CallTool(context.Background(), "dies_echo", nil)
	for _, want := range []string{"plugin dies did not start", "exited before the handshake", "exited with status 3", "first line | cannot open config.toml"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	m.Close()
	if strings.Contains(logs.String(), "[WARN]") && strings.Contains(logs.String(), "failed to exit gracefully") {
		t.Errorf("a warning about a graceful exit for a plugin that had already exited:\n%s", logs)
	}
	// Its stderr reached the log as info lines.
	if !strings.Contains(logs.String(), "[INFO]  plugins.dies: cannot open config.toml") {
		t.Errorf("stderr line not logged at info:\n%s", logs)
	}
}

// What a Go plugin writes to os.Stderr after pluginserver.Serve (forwarded by
// go-plugin's stdio stream) reaches the log at info.
func TestPluginStderrAfterServeIsLogged(t *testing.T) {
	logs, log := newCaptureLog(hclog.Info)
	m := openManager(t, Options{Logger: log}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: testPluginBinary(t)}))
	if _, err := m.CallTool(context.Background(), "tp_echo", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(logs.String(), "testplugin stderr chatter") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "[INFO]  plugins.tp: testplugin stderr chatter") {
		t.Fatalf("os.Stderr after Serve is not in the log at info:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "testplugin stdout chatter") {
		t.Errorf("os.Stdout after Serve is not in the log:\n%s", logs)
	}
}

// A plugin that serves the documented protocol without go-plugin, with and
// without go-plugin's GRPCController, stops well under go-plugin's 2 s
// grace period, and without warnings.
func TestStopWithAndWithoutController(t *testing.T) {
	exe := buildPlugin(t, "testdata/bareplugin")
	for _, controller := range []string{"1", "0"} {
		t.Run("controller="+controller, func(t *testing.T) {
			t.Setenv("BARE_CONTROLLER", controller)
			logs, log := newCaptureLog(hclog.Warn)
			m := openManager(t, Options{Logger: log}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{
				Name: "bare", Exe: exe, Tools: "\n  - {name: pid, capability_classes: []}\n  - {name: wait, capability_classes: []}", Extra: "env: [BARE_CONTROLLER]\n"}))
			pid := callPID(t, m, "bare_pid")
			t0 := time.Now()
			m.Close()
			took := time.Since(t0)
			if alive(pid) {
				t.Fatalf("plugin %d still running after Close", pid)
			}
			if took > time.Second {
				t.Errorf("Close took %s, want well under go-plugin's 2s wait", took)
			}
			t.Logf("stop with controller=%s: %s", controller, took.Round(time.Millisecond))
			if s := logs.String(); s != "" {
				t.Errorf("stopping logged warnings:\n%s", s)
			}
		})
	}
}

// Each plugin gets its own data folder for the project in Configure,
// created before the call.
func TestConfigureCarriesTheDataFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".nexus", "state", "nexus", "plugins")
	m := openManager(t, Options{DataRoot: root, Settings: map[string]map[string]string{"tp": {"k": "v"}}},
		plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: testPluginBinary(t)}))
	res, err := m.CallTool(context.Background(), "tp_config", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		DataDir  string            `json:"data_dir"`
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal([]byte(res.Text), &cfg); err != nil {
		t.Fatalf("config %q: %v", res.Text, err)
	}
	if want := filepath.Join(root, "tp"); cfg.DataDir != want || cfg.Settings["k"] != "v" {
		t.Fatalf("Configure got %+v, want data_dir %s", cfg, want)
	}
	if st, err := os.Stat(cfg.DataDir); err != nil || !st.IsDir() {
		t.Fatalf("data folder: %v", err)
	}
}
