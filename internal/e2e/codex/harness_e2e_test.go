//go:build e2e

package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	codexhost "github.com/nexus-harness/nexus/harness/host/codex"
	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	"github.com/nexus-harness/nexus/internal/fakeresponses"
)

// binDir holds nexus and nexus-plugins, built once for the test binary
// (nexus mcp is the MCP server the sessions talk to).
var binDir string

func TestMain(m *testing.M) {
	e2ekit.HookTimerMain()
	dir, err := e2ekit.BuildCommands("nexus-e2e-codex-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The model the sessions ask for: a model of Codex 0.169.0's bundled
// catalog, so Codex offers the tools a real user gets (apply_patch as a
// freeform custom tool, MCP and multi-agent tools behind tool_search). A
// model outside the catalog gets fallback metadata: no apply_patch, every
// tool offered directly, and a warning item in the --json output.
const model = "gpt-5.5"

// hookEvents are the events Codex 0.169.0 runs command hooks for.
var hookEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
	"PreCompact", "PostCompact", "SubagentStart", "SubagentStop", "Stop", "SessionEnd", "Interrupt",
}

// hookHandler is one command hook as nexus would write it.
type hookHandler struct {
	Event   string
	Matcher string // "" for none
	Command string
	Timeout int // seconds; 0 for Codex's default
	Status  string
}

// trustHash is the hash nexus records as a hook's trusted_hash: the
// production codexhost.TrustHash, which TestE2ECodexTrustHash checks
// against the hash Codex itself reports.
func trustHash(h hookHandler) string {
	var matcher *string
	if h.Matcher != "" {
		matcher = &h.Matcher
	}
	return codexhost.TrustHash(codexhost.Hook{Event: h.Event, Matcher: matcher, Command: h.Command, Timeout: h.Timeout, StatusMessage: h.Status})
}

// hooksJSON renders handlers as a hooks.json, one matcher group per
// handler in the order given; group[i] is handler i's group index within
// its event (its key is "<file>:<event_key>:<group[i]>:0").
func hooksJSON(hs []hookHandler) (b []byte, group []int) {
	events := map[string][]any{}
	for _, h := range hs {
		handler := map[string]any{"type": "command", "command": h.Command}
		if h.Timeout != 0 {
			handler["timeout"] = h.Timeout
		}
		if h.Status != "" {
			handler["statusMessage"] = h.Status
		}
		g := map[string]any{"hooks": []any{handler}}
		if h.Matcher != "" {
			g["matcher"] = h.Matcher
		}
		group = append(group, len(events[h.Event]))
		events[h.Event] = append(events[h.Event], g)
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": events}, "", "  ")
	if err != nil {
		panic(err)
	}
	return b, group
}

// trustTOML is the [hooks.state] entries that mark the handlers of
// hooks.json at path as reviewed, as Codex's /hooks review writes them in
// the user's config.toml.
func trustTOML(path string, hs []hookHandler) string {
	_, group := hooksJSON(hs)
	var b strings.Builder
	for i, h := range hs {
		key := codexhost.HookKey(path, h.Event, group[i], 0)
		fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", strconv.Quote(key), strconv.Quote(trustHash(h)))
	}
	return b.String()
}

// session is one project with its own HOME (Codex's home is HOME/.codex,
// as for a user) and fake API.
type session struct {
	t     *testing.T
	root  string
	home  string
	codex string // HOME/.codex
	proj  string
	api   *fakeresponses.Server
	bin   string
	env   []string
	// hookLog is where the logging hooks append each event's payload.
	hookLog string
	// installOut is what nexus install codex printed (opts.nexus).
	installOut string
}

// nexus runs the nexus under test in the project with the session's
// environment (HOME, no NEXUS_* variables, nexus not on PATH) and returns
// its output; it fails the test unless it exits 0.
func (s *session) nexus(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "nexus"), args...)
	cmd.Dir, cmd.Env = s.proj, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("nexus %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

type sessionOpts struct {
	// hooks installs a logging command hook for every event.
	hooks bool
	// untrusted leaves the hooks without trust entries.
	untrusted bool
	// mcp registers nexus mcp as the MCP server "nexus".
	mcp bool
	// hookScript, when set, is the body of the hook script instead of the
	// logging one; it gets the event name and the log path as $1 and $2.
	hookScript string
	// topConfig is added to config.toml's top-level keys.
	topConfig string
	// agents are custom agent files written to the project's .codex/agents
	// (name -> TOML).
	agents map[string]string
	// nexus installs nexus for Codex in the project, as a user would:
	// `nexus install codex --trust-hooks` (the project is trusted in the
	// user's config.toml already), with neither NEXUS_* variables nor
	// nexus on PATH.
	nexus bool
	// userConfig is added to the end of the user's config.toml (before
	// nexus's trust entries).
	userConfig string
	// installEnv is added to nexus install's environment (settings of the
	// install, such as NEXUS_DECISIONS_ENABLED=false).
	installEnv []string
	// root is the folder to set the session up in (home/, proj/, tmp/),
	// when it must outlive the test's own temporary folder; "" = a new one.
	root string
}

func newSession(t *testing.T, api *fakeresponses.Server, o sessionOpts) *session {
	t.Helper()
	root := o.root
	if root == "" {
		root = t.TempDir()
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), api: api, bin: e2ekit.CodexBin(t)}
	s.codex = filepath.Join(s.home, ".codex")
	s.hookLog = filepath.Join(root, "hooks.jsonl")
	for _, d := range []string{s.codex, s.proj, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", s.proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	var cfg strings.Builder
	// Offline: no plugin marketplace sync (github.com, chatgpt.com), no
	// analytics (ab.chatgpt.com), no update check; a failed request fails
	// at once instead of being retried.
	fmt.Fprintf(&cfg, `model = %q
model_provider = "fake"
check_for_update_on_startup = false
%s
[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "E2E_FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, model, o.topConfig, api.BaseURL(), s.proj)
	if o.mcp {
		fmt.Fprintf(&cfg, "\n[mcp_servers.nexus]\ncommand = %q\nargs = [\"mcp\"]\n", filepath.Join(binDir, "nexus"))
	}
	for name, body := range o.agents {
		dir := filepath.Join(s.proj, ".codex", "agents")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if o.hooks {
		hs := s.loggingHooks(o.hookScript)
		b, _ := hooksJSON(hs)
		path := filepath.Join(s.codex, "hooks.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if !o.untrusted {
			cfg.WriteString(trustTOML(path, hs))
		}
	}
	cfg.WriteString(o.userConfig)
	if err := os.WriteFile(filepath.Join(s.codex, "config.toml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s.env = []string{
		"HOME=" + s.home,
		"USER=e2e",
		"LANG=C.UTF-8",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		// Outside HOME/.codex: Codex refuses to put its PATH helpers
		// (apply_patch, ...) in a Codex home under the temporary directory,
		// and writes oversized hook output under TMPDIR/hook_outputs.
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"E2E_FAKE_API_KEY=sk-e2e-dummy",
	}
	if o.nexus {
		env := s.env
		s.env = append(append([]string(nil), env...), o.installEnv...)
		s.installOut = s.nexus("install", "codex", "--trust-hooks")
		s.env = env
	}
	t.Cleanup(func() {
		// Codex replaces a hook context over 10,000 bytes with a preview and
		// a file path: everything nexus says must arrive whole.
		for _, r := range api.Responses() {
			if !o.nexus {
				break
			}
			if all := r.Responses.AllText(); strings.Contains(all, "Full hook output saved to") {
				t.Errorf("request %d (turn %q): Codex cut a hook context to a preview", r.Seq, r.Turn)
				break
			}
		}
		// Requests the fake does not serve are worth knowing about when
		// Codex is upgraded.
		for _, r := range api.Requests() {
			if r.Responses == nil {
				t.Logf("the fake Responses API got an unexpected request: %s %s", r.Method, r.Path)
			}
		}
		if t.Failed() {
			dump := filepath.Join(os.TempDir(), "nexus-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+"-requests.jsonl")
			if err := api.Dump(dump); err == nil {
				t.Logf("the model's requests: %s", dump)
			}
		}
	})
	return s
}

// logPayload is the start of every hook script: it appends
// {"event", "payload"} to the log ($2) and keeps the payload in $payload.
const logPayload = "payload=$(cat)\nprintf '{\"event\":\"%s\",\"payload\":%s}\\n' \"$1\" \"${payload:-null}\" >> \"$2\"\n"

// loggingHooks is one hook per event that runs the hook script (by
// default one that only logs) with the event name and the session's hook
// log, from the session's root.
func (s *session) loggingHooks(script string) []hookHandler {
	body := "#!/bin/sh\n# hook.sh EVENT LOG: append the event's stdin payload to LOG.\n" + logPayload + script
	script = filepath.Join(s.root, "hook.sh")
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		s.t.Fatal(err)
	}
	var hs []hookHandler
	for _, ev := range hookEvents {
		hs = append(hs, hookHandler{Event: ev, Command: fmt.Sprintf("/bin/sh %s %s %s", script, ev, s.hookLog)})
	}
	return hs
}

// hookRecord is one line of the hook log.
type hookRecord struct {
	Event   string         `json:"event"`
	Payload map[string]any `json:"payload"`
}

func (s *session) hooks() []hookRecord {
	s.t.Helper()
	b, err := os.ReadFile(s.hookLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		s.t.Fatal(err)
	}
	var out []hookRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r hookRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			s.t.Fatalf("hook log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// event is one line of `codex exec --json`.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Text    string `json:"text"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"item"`
	Raw json.RawMessage `json:"-"`
}

type result struct {
	events []event
	stderr string
	wall   time.Duration
	// start and end bound the codex process.
	start, end time.Time
}

// lastMessage is the text of the last agent_message item.
func (r result) lastMessage() string {
	for i := len(r.events) - 1; i >= 0; i-- {
		if e := r.events[i]; e.Type == "item.completed" && e.Item.Type == "agent_message" {
			return e.Item.Text
		}
	}
	return ""
}

// run plays `codex exec --json` with the prompt in the project, approvals
// and sandbox off (the e2e machine is the sandbox; bubblewrap is not
// installed), and fails the test unless it ends cleanly with a completed
// turn.
func (s *session) run(prompt string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"exec", "--json", "--dangerously-bypass-approvals-and-sandbox"}, args...)
	argv = append(argv, prompt)
	cmd := exec.CommandContext(ctx, s.bin, argv...)
	cmd.Dir, cmd.Env = s.proj, s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stderr: stderr.String(), wall: time.Since(start), start: start, end: time.Now()}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	completed := false
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		e.Raw = append(json.RawMessage(nil), sc.Bytes()...)
		r.events = append(r.events, e)
		switch {
		case e.Type == "turn.completed":
			completed = true
		case e.Type == "turn.failed", e.Type == "error", e.Type == "item.completed" && e.Item.Type == "error":
			s.t.Errorf("codex exec reported: %s", e.Raw)
		}
	}
	if err != nil || !completed {
		s.t.Fatalf("codex exec: %v (turn completed: %v)\nstderr: %s\nstdout: %s", err, completed, r.stderr, e2ekit.Tail(stdout.String(), 4000))
	}
	return r
}
