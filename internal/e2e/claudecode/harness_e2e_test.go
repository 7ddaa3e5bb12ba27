//go:build e2e

package claudecode

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

	"github.com/nexus-harness/nexus/internal/fakeanthropic"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// binDir holds nexus, nexus-full and nexus-plugins, built once for the
// test binary.
var binDir string

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == hookTimerArg {
		os.Exit(hookTimer(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) > 2 && os.Args[1] == mcpStandInArg {
		os.Exit(mcpStandIn(os.Args[2]))
	}
	if len(os.Args) > 4 && os.Args[1] == mcpTimerArg {
		os.Exit(mcpTimer(os.Args[2], os.Args[3], os.Args[4:]))
	}
	dir, err := os.MkdirTemp("", "nexus-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for _, pkg := range []string{"nexus", "nexus-full", "nexus-plugins"} {
		// Built as `make build` builds them, so timings match an install.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, pkg), "../../../cmd/"+pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// claudeBin is the pinned Claude Code CLI that scripts/e2e/setup.d
// installed; the test fails (never skips) without it.
func claudeBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("NEXUS_E2E_CLAUDE"); p != "" {
		return p
	}
	p := filepath.Join(testenv.ModuleRoot(t), ".e2e", "claude-code", "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the pinned Claude Code CLI is not installed (%v): run `make e2e` or scripts/e2e/setup.d/20-claude-code.sh", err)
	}
	return p
}

// session is one project with its own HOME and fake API.
type session struct {
	t      *testing.T
	home   string
	proj   string
	api    *fakeanthropic.Server
	claude string
	// env is what Claude Code is started with (it passes it on to hooks
	// and the MCP server).
	env []string
}

type sessionOpts struct {
	// noNexus leaves nexus out of the project (the baseline of the timing).
	noNexus bool
	// noMCP: the timing removes nexus's MCP server after install.
	noMCP bool
	// noHooks: the timing removes nexus's hooks after install (with noMCP:
	// what is left are the agents and skills).
	noHooks bool
	// standInMCP: the timing replaces nexus's MCP servers with stand-ins
	// answering at once (session.standInMCP).
	standInMCP bool
	// bare starts Claude Code with only what a launcher gives (no
	// NEXUS_CORE_DIR, no nexus on PATH).
	bare bool
}

func newSession(t *testing.T, api *fakeanthropic.Server, o sessionOpts) *session {
	t.Helper()
	root := t.TempDir()
	s := &session{t: t, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), api: api, claude: claudeBin(t)}
	for _, d := range []string{s.home, s.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := exec.Command("git", "init", "-q", s.proj)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	core := testenv.CoreDir(t)
	base := []string{
		"HOME=" + s.home,
		"USER=e2e",
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=" + api.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		// As root, --dangerously-skip-permissions needs this.
		"IS_SANDBOX=1",
	}
	if o.bare {
		s.env = append(base, "PATH=/usr/bin:/bin")
	} else {
		s.env = append(base, "PATH="+binDir+":/usr/local/bin:/usr/bin:/bin", "NEXUS_CORE_DIR="+core)
	}
	if !o.noNexus {
		install := exec.Command(filepath.Join(binDir, "nexus"), "install", "claude")
		install.Dir = s.proj
		install.Env = append(base, "PATH="+binDir+":/usr/bin:/bin", "NEXUS_CORE_DIR="+core)
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("nexus install claude: %v\n%s", err, out)
		}
	}
	t.Cleanup(func() {
		// Claude Code replaces a hook's additionalContext of 10,000
		// characters or more with a 2 KB preview and a file path: every
		// context nexus gives must arrive whole, in every session.
		for _, r := range api.Messages() {
			if i := strings.Index(r.Messages.AllText(), persistedMarker); i >= 0 {
				t.Errorf("request %d (turn %q): Claude Code cut a hook context to a preview: %.300q", r.Seq, r.Turn, r.Messages.AllText()[max(0, i-40):])
				break
			}
		}
		// Requests the fake does not serve as Claude Code expects (a 404)
		// are worth knowing about when Claude Code is upgraded.
		for _, r := range api.Requests() {
			known := (r.Method == "POST" && strings.HasPrefix(r.Path, "/v1/messages")) || r.Method == "HEAD" ||
				(r.Method == "GET" && (r.Path == "/" || r.Path == "/v1/models"))
			if !known {
				t.Logf("the fake Anthropic API got an unexpected request: %s %s", r.Method, r.Path)
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

// event is one line of `claude -p --output-format stream-json --verbose`.
type event struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	HookEvent string          `json:"hook_event"`
	HookName  string          `json:"hook_name"`
	Output    string          `json:"output"`
	ExitCode  *int            `json:"exit_code"`
	Outcome   string          `json:"outcome"`
	Tools     []string        `json:"tools"`
	MCP       []mcpStatus     `json:"mcp_servers"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	SessionID string          `json:"session_id"`
	Raw       json.RawMessage `json:"-"`
}

type mcpStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type result struct {
	events []event
	stderr string
	start  time.Time // when claude was started
	wall   time.Duration
}

func (r result) init() event {
	for _, e := range r.events {
		if e.Type == "system" && e.Subtype == "init" {
			return e
		}
	}
	return event{}
}

func (r result) final() event {
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Type == "result" {
			return r.events[i]
		}
	}
	return event{}
}

// hooks returns the hook responses of one event, in order.
func (r result) hooks(hookEvent string) []event {
	var out []event
	for _, e := range r.events {
		if e.Type == "system" && e.Subtype == "hook_response" && e.HookEvent == hookEvent {
			out = append(out, e)
		}
	}
	return out
}

// run starts `claude -p` with the prompt in the project and waits for it.
func (s *session) run(prompt string, args ...string) result {
	s.t.Helper()
	return s.converse([]string{prompt}, args...)
}

// converse runs one Claude Code process that gets the prompts one after
// the other as stream-json user messages, each sent once the previous one
// has its result (so slash commands such as /compact act on the
// conversation so far, inside one session).
func (s *session) converse(prompts []string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}, args...)
	cmd := exec.CommandContext(ctx, s.claude, argv...)
	cmd.Dir, cmd.Env = s.proj, s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	send := func(p string) {
		msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": p}})
		stdin.Write(append(msg, '\n'))
	}
	start := time.Now()
	r := result{start: start}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start claude: %v", err)
	}
	var raw strings.Builder
	send(prompts[0])
	next := 1
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		raw.Write(sc.Bytes())
		raw.WriteByte('\n')
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		e.Raw = append(json.RawMessage(nil), sc.Bytes()...)
		r.events = append(r.events, e)
		if e.Type == "result" {
			if next < len(prompts) {
				send(prompts[next])
				next++
			} else {
				stdin.Close()
			}
		}
	}
	err = cmd.Wait()
	r.stderr, r.wall = stderr.String(), time.Since(start)
	if err != nil {
		s.t.Fatalf("claude -p: %v\nstderr: %s\nstdout tail: %s", err, r.stderr, tail(raw.String(), 4000))
	}
	if next < len(prompts) {
		s.t.Fatalf("claude -p ended after %d of %d prompts\nstderr: %s\nstdout tail: %s", next, len(prompts), r.stderr, tail(raw.String(), 4000))
	}
	for _, e := range r.events {
		if e.Type == "result" && e.IsError {
			s.t.Fatalf("claude -p did not finish cleanly: %s\nstderr: %s", e.Raw, r.stderr)
		}
	}
	if r.final().Type == "" {
		s.t.Fatalf("claude -p gave no result\nstderr: %s\nstdout tail: %s", r.stderr, tail(raw.String(), 4000))
	}
	return r
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// readJSON decodes a file of the project.
func (s *session) readJSON(rel string, v any) {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.proj, rel))
	if err != nil {
		s.t.Fatalf("%s: %v", rel, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		s.t.Fatalf("%s: %v", rel, err)
	}
}
