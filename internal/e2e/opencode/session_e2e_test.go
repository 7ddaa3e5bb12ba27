//go:build e2e

package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	"github.com/nexus-harness/nexus/internal/fakechat"
)

// binDir holds nexus and nexus-plugins, built once for the test binary as
// `make build` builds them (the sessions' MCP servers and plugin run them).
var binDir string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case echoOnceArg:
			os.Exit(echoOnce())
		case echoServeArg:
			os.Exit(echoServe())
		}
	}
	dir, err := e2ekit.BuildCommands("nexus-e2e-opencode-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sysPath is the PATH OpenCode runs with: ripgrep from Debian is in
// /usr/bin.
const sysPath = "/usr/local/bin:/usr/bin:/bin"

// opencodeBin is the pinned OpenCode CLI that scripts/e2e/setup.d
// installed; the test fails (never skips) without it or without rg, which
// OpenCode's grep, glob and skill tools run.
func opencodeBin(t testing.TB) string {
	t.Helper()
	p := e2ekit.PinnedCLI(t, "opencode", "opencode", "NEXUS_E2E_OPENCODE", "50-opencode.sh")
	for _, dir := range filepath.SplitList(sysPath) {
		if _, err := os.Stat(filepath.Join(dir, "rg")); err == nil {
			return p
		}
	}
	t.Fatalf("rg (ripgrep) is not on %s: run scripts/e2e/setup.d/50-opencode.sh (apt-get install ripgrep)", sysPath)
	return ""
}

// session is one project with its own HOME and XDG folders, driven by
// `opencode run` against a fake API.
type session struct {
	t        testing.TB
	root     string
	proj     string
	api      *fakechat.Server
	opencode string
	env      []string
	// probeLog is where testdata/probe.js writes, when installed.
	probeLog string
}

type sessionOpts struct {
	// plugins are testdata files copied to .opencode/plugins/.
	plugins []string
	// noMCP leaves the nexus MCP server out of opencode.json.
	noMCP bool
	// model is the model id the fake provider offers (default
	// "fake-model"); an id with "gpt-" makes OpenCode offer apply_patch
	// instead of write and edit.
	model string
	env   []string
	// nexus installs nexus for OpenCode in the project the way a user
	// does (`nexus install opencode`, the real binary: plugin, MCP
	// servers, agents, skills), in the session's environment, which has
	// no NEXUS_* variable and no nexus on PATH.
	nexus bool
}

func newSession(t testing.TB, api *fakechat.Server, o sessionOpts) *session {
	t.Helper()
	root := t.TempDir()
	s := &session{t: t, root: root, proj: filepath.Join(root, "proj"), api: api, opencode: opencodeBin(t), probeLog: filepath.Join(root, "probe.jsonl")}
	xdg := filepath.Join(root, "xdg")
	for _, d := range []string{filepath.Join(root, "home"), s.proj, filepath.Join(xdg, "config", "opencode")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", s.proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	model := o.model
	if model == "" {
		model = "fake-model"
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": api.URL, "apiKey": "sk-e2e-dummy"},
			"models":  map[string]any{model: map[string]any{"name": "Fake model"}},
		}},
		"model":       "fake/" + model,
		"small_model": "fake/" + model,
		"autoupdate":  false,
		"share":       "disabled",
	}
	if !o.noMCP && !o.nexus {
		cfg["mcp"] = map[string]any{"nexus": map[string]any{"type": "local", "command": []string{filepath.Join(binDir, "nexus"), "mcp", "--without", "decisions"}}}
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	writeFile(t, filepath.Join(s.proj, "opencode.json"), b)
	configDirs := []string{filepath.Join(xdg, "config", "opencode")}
	if len(o.plugins) > 0 {
		dot := filepath.Join(s.proj, ".opencode")
		configDirs = append(configDirs, dot)
		for _, p := range o.plugins {
			src, err := os.ReadFile(filepath.Join("testdata", p))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dot, "plugins", p), src)
		}
	}
	if o.nexus {
		configDirs = append(configDirs, filepath.Join(s.proj, ".opencode"))
	}
	for _, d := range configDirs {
		seedPluginDeps(t, d)
	}
	s.env = append([]string{
		"HOME=" + filepath.Join(root, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(xdg, "config"),
		"XDG_DATA_HOME=" + filepath.Join(xdg, "data"),
		"XDG_CACHE_HOME=" + filepath.Join(xdg, "cache"),
		"XDG_STATE_HOME=" + filepath.Join(xdg, "state"),
		"PATH=" + sysPath,
		"USER=e2e",
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		// models.dev (the model catalogue) and the update check are the
		// network calls OpenCode makes on its own.
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"PROBE_LOG=" + s.probeLog,
	}, o.env...)
	for _, kv := range s.env {
		if strings.HasPrefix(kv, "NEXUS_") {
			t.Fatalf("the session's environment sets %s; nexus must work without any NEXUS_* variable", kv)
		}
	}
	if o.nexus {
		s.install()
	}
	t.Cleanup(func() {
		if t.Failed() {
			dump := filepath.Join(os.TempDir(), "nexus-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+"-requests.jsonl")
			if err := api.Dump(dump); err == nil {
				t.Logf("the model's requests: %s", dump)
			}
		}
	})
	return s
}

// install runs `nexus install opencode` in the project with the session's
// environment, as a user would.
func (s *session) install(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "nexus"), append([]string{"install", "opencode"}, args...)...)
	cmd.Dir, cmd.Env = s.proj, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("nexus install opencode %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// seedPluginDeps stops OpenCode from installing @opencode-ai/plugin from
// the npm registry into a config folder. OpenCode 1.18.33 runs that
// install for every config folder at start and, when any plugin is
// configured, waits for it before loading plugins. It skips the folder
// when node_modules exists and package-lock.json lists the package as a
// dependency of the root (docs/opencode-notes.md, "The npm install at
// start").
func seedPluginDeps(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "package-lock.json"), []byte(`{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}`+"\n"))
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runEvent is one line of `opencode run --format json`.
type runEvent struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      json.RawMessage `json:"part"`
	Error     json.RawMessage `json:"error"`
}

type runResult struct {
	events []runEvent
	stdout string
	stderr string
	wall   time.Duration
}

// text joins the text parts OpenCode printed.
func (r runResult) text() string {
	var b strings.Builder
	for _, e := range r.events {
		var p struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if e.Type == "text" && json.Unmarshal(e.Part, &p) == nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// run starts `opencode run --format json` in the project with the prompt on
// standard input (an argument with a space would reach the model in
// quotes) and waits for it.
func (s *session) run(prompt string, args ...string) runResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.opencode, append([]string{"run", "--format", "json"}, args...)...)
	cmd.Dir, cmd.Env = s.proj, s.env
	cmd.Stdin = strings.NewReader(prompt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := runResult{stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(start)}
	if err != nil {
		s.t.Fatalf("opencode run: %v\nstderr: %s\nstdout: %s", err, tail(r.stderr, 4000), tail(r.stdout, 4000))
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e runEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			s.t.Fatalf("opencode run printed a line that is not JSON: %q", sc.Text())
		}
		if e.Type == "error" {
			s.t.Fatalf("opencode run reported an error: %s\nstderr: %s", sc.Text(), tail(r.stderr, 4000))
		}
		r.events = append(r.events, e)
	}
	return r
}

func tail(s string, n int) string { return e2ekit.Tail(s, n) }

// hookCall is one line of the probe plugin's log.
type hookCall struct {
	T      int64           `json:"t"`
	Hook   string          `json:"hook"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// eventType is the bus event type of an "event" hook call.
func (h hookCall) eventType() string {
	var in struct {
		Event struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	json.Unmarshal(h.Input, &in)
	return in.Event.Type
}

// probeCalls reads the probe plugin's log.
func (s *session) probeCalls() []hookCall {
	s.t.Helper()
	b, err := os.ReadFile(s.probeLog)
	if err != nil {
		s.t.Fatalf("the probe plugin wrote no log: %v", err)
	}
	var out []hookCall
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var h hookCall
		if err := json.Unmarshal(line, &h); err != nil {
			s.t.Fatalf("probe log line %q: %v", line, err)
		}
		out = append(out, h)
	}
	return out
}
