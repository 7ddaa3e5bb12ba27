//go:build e2e

package e2ekit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/fakeanthropic"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// ClaudeSession is one project with its own HOME and fake Messages API,
// nexus installed for Claude Code, driven by `claude -p`.
type ClaudeSession struct {
	T      *testing.T
	Home   string
	Proj   string
	API    *fakeanthropic.Server
	Claude string
	// Env is what Claude Code is started with (it passes it on to hooks
	// and the MCP server).
	Env []string
}

// ClaudeOpts say how to set a session up.
type ClaudeOpts struct {
	// NoNexus leaves nexus out of the project (the baseline of a timing).
	NoNexus bool
	// NoMCP: a timing removes nexus's MCP server after install.
	NoMCP bool
	// Bare starts Claude Code with only what a launcher gives (no
	// NEXUS_CORE_DIR, no nexus on PATH).
	Bare bool
	// Root and Home place the session: an existing project folder (another
	// host's session may share it) and home folder; "" = new ones.
	Proj, Home string
}

// PersistedMarker is how Claude Code 2.1.197 announces a hook context it
// did not pass on whole ("<Event> hook additional context:
// <persisted-output>\nOutput too large (…). Full output saved to: …").
const PersistedMarker = "hook additional context: <persisted-output>"

// NewClaudeSession sets a project up for Claude Code with the nexus in
// binDir installed (nexus install claude), and checks when the test ends
// that every hook context reached the model whole.
func NewClaudeSession(t *testing.T, api *fakeanthropic.Server, binDir string, o ClaudeOpts) *ClaudeSession {
	t.Helper()
	root := t.TempDir()
	s := &ClaudeSession{T: t, Home: o.Home, Proj: o.Proj, API: api, Claude: ClaudeBin(t)}
	if s.Home == "" {
		s.Home = filepath.Join(root, "home")
	}
	if s.Proj == "" {
		s.Proj = filepath.Join(root, "proj")
		if err := os.MkdirAll(s.Proj, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("git", "init", "-q", s.Proj).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	core := testenv.CoreDir(t)
	base := []string{
		"HOME=" + s.Home,
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
	if o.Bare {
		s.Env = append(base, "PATH=/usr/bin:/bin")
	} else {
		s.Env = append(base, "PATH="+binDir+":/usr/local/bin:/usr/bin:/bin", "NEXUS_CORE_DIR="+core)
	}
	if !o.NoNexus {
		install := exec.Command(filepath.Join(binDir, "nexus"), "install", "claude")
		install.Dir = s.Proj
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
			if i := strings.Index(r.Messages.AllText(), PersistedMarker); i >= 0 {
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

// ClaudeEvent is one line of `claude -p --output-format stream-json --verbose`.
type ClaudeEvent struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	HookEvent string          `json:"hook_event"`
	HookName  string          `json:"hook_name"`
	Output    string          `json:"output"`
	ExitCode  *int            `json:"exit_code"`
	Outcome   string          `json:"outcome"`
	Tools     []string        `json:"tools"`
	MCP       []MCPStatus     `json:"mcp_servers"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	SessionID string          `json:"session_id"`
	Raw       json.RawMessage `json:"-"`
}

// MCPStatus is an MCP server's state at Claude Code's start.
type MCPStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ClaudeResult is one `claude -p` run.
type ClaudeResult struct {
	Events []ClaudeEvent
	Stderr string
	Wall   time.Duration
}

// Init is the system init event.
func (r ClaudeResult) Init() ClaudeEvent {
	for _, e := range r.Events {
		if e.Type == "system" && e.Subtype == "init" {
			return e
		}
	}
	return ClaudeEvent{}
}

// Final is the result event.
func (r ClaudeResult) Final() ClaudeEvent {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if r.Events[i].Type == "result" {
			return r.Events[i]
		}
	}
	return ClaudeEvent{}
}

// Hooks returns the hook responses of one event, in order.
func (r ClaudeResult) Hooks(hookEvent string) []ClaudeEvent {
	var out []ClaudeEvent
	for _, e := range r.Events {
		if e.Type == "system" && e.Subtype == "hook_response" && e.HookEvent == hookEvent {
			out = append(out, e)
		}
	}
	return out
}

// Run starts `claude -p` with the prompt in the project and waits for it.
func (s *ClaudeSession) Run(prompt string, args ...string) ClaudeResult {
	s.T.Helper()
	return s.Converse([]string{prompt}, args...)
}

// Converse runs one Claude Code process that gets the prompts one after
// the other as stream-json user messages, each sent once the previous one
// has its result (so slash commands such as /compact act on the
// conversation so far, inside one session).
func (s *ClaudeSession) Converse(prompts []string, args ...string) ClaudeResult {
	s.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}, args...)
	cmd := exec.CommandContext(ctx, s.Claude, argv...)
	cmd.Dir, cmd.Env = s.Proj, s.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		s.T.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		s.T.Fatal(err)
	}
	send := func(p string) {
		msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": p}})
		stdin.Write(append(msg, '\n'))
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		s.T.Fatalf("start claude: %v", err)
	}
	var r ClaudeResult
	var raw strings.Builder
	send(prompts[0])
	next := 1
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		raw.Write(sc.Bytes())
		raw.WriteByte('\n')
		var e ClaudeEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		e.Raw = append(json.RawMessage(nil), sc.Bytes()...)
		r.Events = append(r.Events, e)
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
	r.Stderr, r.Wall = stderr.String(), time.Since(start)
	if err != nil {
		s.T.Fatalf("claude -p: %v\nstderr: %s\nstdout tail: %s", err, r.Stderr, Tail(raw.String(), 4000))
	}
	if next < len(prompts) {
		s.T.Fatalf("claude -p ended after %d of %d prompts\nstderr: %s\nstdout tail: %s", next, len(prompts), r.Stderr, Tail(raw.String(), 4000))
	}
	for _, e := range r.Events {
		if e.Type == "result" && e.IsError {
			s.T.Fatalf("claude -p did not finish cleanly: %s\nstderr: %s", e.Raw, r.Stderr)
		}
	}
	if r.Final().Type == "" {
		s.T.Fatalf("claude -p gave no result\nstderr: %s\nstdout tail: %s", r.Stderr, Tail(raw.String(), 4000))
	}
	return r
}

// ReadJSON decodes a file of the project.
func (s *ClaudeSession) ReadJSON(rel string, v any) {
	s.T.Helper()
	b, err := os.ReadFile(filepath.Join(s.Proj, rel))
	if err != nil {
		s.T.Fatalf("%s: %v", rel, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		s.T.Fatalf("%s: %v", rel, err)
	}
}
