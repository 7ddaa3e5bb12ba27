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
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	codexhost "github.com/nexus-harness/nexus/harness/host/codex"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

const smokePatch = "*** Begin Patch\n*** Add File: notes/smoke.md\n+written by apply_patch\n*** End Patch\n"

// smokeScript: a shell command, a tool_search that finds nexus's MCP
// tools, an MCP call, an apply_patch, an answer.
func smokeScript() *fr.Server {
	return fr.New(
		fr.Turn{Name: "shell", When: fr.Prompt("e2e: codex smoke"), Reply: fr.Reply{Text: "Running a command.", Calls: []fr.Call{
			fr.Function("call_sh", "exec_command", map[string]any{"cmd": "echo smoke > smoke.txt && cat smoke.txt"}),
		}}},
		fr.Turn{Name: "search", When: fr.After("call_sh"), Reply: fr.Reply{Calls: []fr.Call{fr.ToolSearch("call_search", "nexus plan status")}}},
		fr.Turn{Name: "mcp", When: fr.After("call_search"), Reply: fr.Reply{Calls: []fr.Call{
			fr.NamespacedFunction("call_mcp", "mcp__nexus", "nx_plan_status", map[string]any{}),
		}}},
		fr.Turn{Name: "patch", When: fr.After("call_mcp"), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("call_patch", "apply_patch", smokePatch)}}},
		fr.Turn{Name: "answer", When: fr.After("call_patch"), Reply: fr.Reply{Text: "Smoke done."}},
	)
}

// payloadKeys are the fields of each event's stdin payload in Codex
// 0.169.0 for the Lead (subagent events add agent_id and agent_type).
var payloadKeys = map[string][]string{
	"SessionStart":     {"cwd", "hook_event_name", "model", "permission_mode", "session_id", "source", "transcript_path"},
	"UserPromptSubmit": {"cwd", "hook_event_name", "model", "permission_mode", "prompt", "session_id", "transcript_path", "turn_id"},
	"PreToolUse":       {"cwd", "hook_event_name", "model", "permission_mode", "session_id", "tool_input", "tool_name", "tool_use_id", "transcript_path", "turn_id"},
	"PostToolUse":      {"cwd", "hook_event_name", "model", "permission_mode", "session_id", "tool_input", "tool_name", "tool_response", "tool_use_id", "transcript_path", "turn_id"},
	"Stop":             {"cwd", "hook_event_name", "last_assistant_message", "model", "permission_mode", "session_id", "stop_hook_active", "transcript_path", "turn_id"},
	"SessionEnd":       {"cwd", "hook_event_name", "reason", "session_id", "transcript_path"},
}

// TestE2ECodexFakeAPISmoke drives one real `codex exec` session against
// the fake Responses API, with nexus mcp as an MCP server and a trusted
// logging hook on every event: the model runs a shell command, finds
// nexus's tools through tool_search, calls one, applies a patch and
// answers. It checks what the model was sent and what every hook got.
func TestE2ECodexFakeAPISmoke(t *testing.T) {
	t.Parallel()
	api := smokeScript()
	defer api.Close()
	s := newSession(t, api, sessionOpts{hooks: true, mcp: true})
	r := s.run("e2e: codex smoke")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	// TMPDIR outside the Codex home lets Codex install its PATH helpers.
	if strings.Contains(r.stderr, "Refusing to create helper binaries") {
		t.Errorf("Codex refused its PATH helpers: %s", r.stderr)
	}
	if got := r.lastMessage(); got != "Smoke done." {
		t.Errorf("last agent message %q", got)
	}

	// What the model was offered and sent.
	first, _ := api.Answered("shell")
	rq := first.Responses
	if rq.Model != model || !rq.Stream || rq.Store {
		t.Errorf("first request: model %q stream %v store %v", rq.Model, rq.Stream, rq.Store)
	}
	for _, name := range []string{"exec_command", "apply_patch", "tool_search"} {
		if !rq.HasTool(name) {
			t.Errorf("tool %s not offered; tools: %v", name, rq.ToolNames())
		}
	}
	if tl, _ := rq.Tool("apply_patch"); tl.Type != "custom" {
		t.Errorf("apply_patch offered as %q, want a freeform custom tool", tl.Type)
	}
	if slices.ContainsFunc(rq.ToolNames(), func(n string) bool { return strings.HasPrefix(n, "mcp__nexus") }) {
		t.Errorf("nexus's MCP tools offered directly, not behind tool_search: %v", rq.ToolNames())
	}
	if ut := rq.UserTexts(); len(ut) == 0 || !strings.Contains(ut[len(ut)-1], "e2e: codex smoke") {
		t.Errorf("user messages %q", ut)
	}

	req, _ := api.Answered("search")
	if out, ok := req.Responses.Output("call_sh"); !ok || !strings.Contains(out.Output.Text(), "smoke") {
		t.Errorf("shell output %+v", out)
	}
	req, _ = api.Answered("mcp")
	found, ok := req.Responses.Output("call_search")
	if !ok || found.Type != "tool_search_output" {
		t.Fatalf("tool_search output %+v", found)
	}
	var searchNames []string
	for _, tl := range found.Tools {
		for _, sub := range tl.Tools {
			searchNames = append(searchNames, tl.Name+"/"+sub.Name)
		}
	}
	if !slices.Contains(searchNames, "mcp__nexus/nx_plan_status") {
		t.Errorf("tool_search found %v, not mcp__nexus/nx_plan_status", searchNames)
	}
	req, _ = api.Answered("patch")
	if out, ok := req.Responses.Output("call_mcp"); !ok || !strings.Contains(out.Output.Text(), `{"active":false}`) {
		t.Errorf("MCP output %+v", out)
	}
	req, _ = api.Answered("answer")
	if out, ok := req.Responses.Output("call_patch"); !ok || out.Type != "custom_tool_call_output" || !strings.Contains(out.Output.Text(), "A notes/smoke.md") {
		t.Errorf("apply_patch output %+v", out)
	}
	if b, err := os.ReadFile(filepath.Join(s.proj, "notes", "smoke.md")); err != nil || string(b) != "written by apply_patch\n" {
		t.Errorf("patched file: %q %v", b, err)
	}

	// What the hooks got: every event of the session in order, each payload
	// with exactly the fields of its event, one session id throughout.
	hooks := s.hooks()
	var seq []string
	for _, h := range hooks {
		name := h.Event
		if tn, ok := h.Payload["tool_name"].(string); ok {
			name += " " + tn
		}
		seq = append(seq, name)
	}
	want := []string{
		"SessionStart", "UserPromptSubmit",
		"PreToolUse Bash", "PostToolUse Bash",
		"PreToolUse mcp__nexus__nx_plan_status", "PostToolUse mcp__nexus__nx_plan_status",
		"PreToolUse apply_patch", "PostToolUse apply_patch",
		"Stop", "SessionEnd",
	}
	if !slices.Equal(seq, want) {
		t.Fatalf("hook events\n got %q\nwant %q", seq, want)
	}
	session := hooks[0].Payload["session_id"]
	for _, h := range hooks {
		keys := make([]string, 0, len(h.Payload))
		for k := range h.Payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, payloadKeys[h.Event]) {
			t.Errorf("%s payload fields %v, want %v", h.Event, keys, payloadKeys[h.Event])
		}
		if h.Payload["session_id"] != session || h.Payload["hook_event_name"] != h.Event || h.Payload["cwd"] != s.proj {
			t.Errorf("%s: session %v event %v cwd %v", h.Event, h.Payload["session_id"], h.Payload["hook_event_name"], h.Payload["cwd"])
		}
	}
	field := func(i int, k string) any { return hooks[i].Payload[k] }
	checks := []struct {
		i    int
		key  string
		want any
	}{
		{0, "source", "startup"},
		{0, "permission_mode", "bypassPermissions"},
		{1, "prompt", "e2e: codex smoke"},
		{2, "tool_use_id", "call_sh"},
		{2, "tool_input", map[string]any{"command": "echo smoke > smoke.txt && cat smoke.txt"}},
		{4, "tool_input", map[string]any{}},
		{6, "tool_input", map[string]any{"command": smokePatch}},
		{8, "last_assistant_message", "Smoke done."},
		{8, "stop_hook_active", false},
		{9, "reason", "other"},
	}
	for _, c := range checks {
		if got := field(c.i, c.key); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %s = %#v, want %#v", seq[c.i], c.key, got, c.want)
		}
	}
	if resp, _ := field(3, "tool_response").(string); !strings.Contains(resp, "smoke") {
		t.Errorf("PostToolUse Bash tool_response %q", resp)
	}
	if resp, _ := field(5, "tool_response").(map[string]any); resp["structuredContent"] == nil {
		t.Errorf("PostToolUse MCP tool_response %v", field(5, "tool_response"))
	}
}

// TestE2ECodexUntrustedHooksSkipped: the same hooks without [hooks.state]
// trust entries are skipped by codex exec without a word (no warning item,
// nothing on stderr about hooks), and the session runs as usual.
func TestE2ECodexUntrustedHooksSkipped(t *testing.T) {
	t.Parallel()
	api := fr.New(
		fr.Turn{Name: "shell", When: fr.Prompt("e2e: untrusted"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("call_sh", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "answer", When: fr.After("call_sh"), Reply: fr.Reply{Text: "Done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{hooks: true, untrusted: true})
	r := s.run("e2e: untrusted")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	if h := s.hooks(); len(h) != 0 {
		t.Errorf("untrusted hooks ran: %v", h)
	}
	if strings.Contains(strings.ToLower(r.stderr), "hook") {
		t.Logf("stderr mentions hooks: %s", r.stderr)
	}
}

// TestE2ECodexTrustHash checks nexus's hook key and trust hash
// (harness/host/codex HookKey and TrustHash) against those Codex itself
// reports for each hook (the app server's hooks/list, what /hooks shows),
// for handlers with and without matcher, timeout and status message, on
// events with clamped timeouts and events that drop their matcher, in
// hooks.json.
func TestE2ECodexTrustHash(t *testing.T) {
	t.Parallel()
	api := fr.New()
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	hs := []hookHandler{
		{Event: "PreToolUse", Matcher: "Bash", Command: "nexus hook --host codex", Timeout: 5, Status: "checking <&> ü"},
		{Event: "PreToolUse", Matcher: "apply_patch|Edit|Write", Command: "/usr/bin/nexus hook"},
		{Event: "PostToolUse", Command: "nexus hook", Timeout: 100000},
		{Event: "SessionStart", Matcher: "startup|resume|compact", Command: `sh -c 'echo "quoted"'`},
		{Event: "UserPromptSubmit", Matcher: "dropped", Command: "nexus hook"},
		{Event: "SessionEnd", Command: "nexus hook", Timeout: 10},
		{Event: "SessionEnd", Command: "nexus hook end"},
		{Event: "Interrupt", Command: "nexus hook", Timeout: 2},
		{Event: "SubagentStart", Matcher: "architect", Command: "nexus hook"},
		{Event: "Stop", Command: "nexus hook"},
	}
	b, group := hooksJSON(hs)
	path := filepath.Join(s.codex, "hooks.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	listed := s.hooksList()
	for i, h := range hs {
		key := codexhost.HookKey(path, h.Event, group[i], 0)
		got, ok := listed[key]
		if !ok {
			t.Errorf("Codex lists no hook %s (it lists %v)", key, listed)
			continue
		}
		if want := trustHash(h); got != want {
			t.Errorf("%s: Codex's hash %s, codex.TrustHash %s", key, got, want)
		}
	}
}

// hooksList asks `codex app-server` (JSON-RPC over stdio) for hooks/list in
// the project and returns each hook's key and currentHash.
func (s *session) hooksList() map[string]string {
	s.t.Helper()
	out := map[string]string{}
	for k, h := range s.hooksListFull() {
		out[k] = h.hash
	}
	return out
}

// listedHook is what hooks/list says about one hook.
type listedHook struct{ hash, trust string }

// hooksListFull is hooksList with each hook's trust status.
func (s *session) hooksListFull() map[string]listedHook {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, "app-server")
	cmd.Dir, cmd.Env = s.proj, s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	for _, m := range []string{
		`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"nexus-e2e","version":"0"}}}`,
		`{"method":"initialized"}`,
		fmt.Sprintf(`{"id":2,"method":"hooks/list","params":{"cwds":[%q]}}`, s.proj),
	} {
		fmt.Fprintln(in, m)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []struct {
						Key         string `json:"key"`
						CurrentHash string `json:"currentHash"`
						TrustStatus string `json:"trustStatus"`
					} `json:"hooks"`
					Warnings []string `json:"warnings"`
					Errors   []any    `json:"errors"`
				} `json:"data"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		if msg.Error != nil {
			s.t.Fatalf("hooks/list: %s", msg.Error)
		}
		got := map[string]listedHook{}
		for _, d := range msg.Result.Data {
			for _, h := range d.Hooks {
				got[h.Key] = listedHook{h.CurrentHash, h.TrustStatus}
			}
			if len(d.Errors) > 0 {
				s.t.Errorf("hooks/list errors: %v", d.Errors)
			}
			for _, w := range d.Warnings {
				s.t.Logf("hooks/list warning: %s", w)
			}
		}
		return got
	}
	s.t.Fatalf("codex app-server gave no hooks/list answer: %v\nstderr: %s", sc.Err(), stderr.String())
	return nil
}
