package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
)

// eventJSON renders an event's set fields (for golden files).
func eventJSON(ev lifecycle.Event) map[string]any {
	m := map[string]any{"name": ev.Name}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("session_id", ev.SessionID)
	set("dir", ev.Dir)
	set("agent_id", ev.AgentID)
	set("agent_type", ev.AgentType)
	set("source", ev.Source)
	set("prompt", ev.Prompt)
	set("tool", ev.Tool)
	set("status", ev.Status)
	if ev.ToolInput != nil {
		m["tool_input"] = ev.ToolInput
	}
	if ev.LastMessage != nil {
		m["last_message"] = *ev.LastMessage
	}
	return m
}

// scriptedRun stands in for the lifecycle engine: a reply per event that
// shows which event it answers.
func scriptedRun(_ context.Context, ev lifecycle.Event) (lifecycle.Reply, error) {
	switch ev.Name {
	case lifecycle.SessionStart:
		return lifecycle.Reply{Context: "CTX session start (" + ev.Source + ")", Notice: "not shown"}, nil
	case lifecycle.UserMessage:
		return lifecycle.Reply{Context: "CTX message: " + ev.Prompt}, nil
	case lifecycle.SubagentSpawn, lifecycle.SubagentResume:
		return lifecycle.Reply{Context: "CTX " + ev.Name + " of " + ev.Role()}, nil
	case lifecycle.SubagentComplete:
		return lifecycle.Reply{Context: "CTX verify the " + ev.Role() + "'s work"}, nil
	case lifecycle.PreToolUse:
		switch ev.Tool {
		case ToolWrite, ToolApplyPatch:
			return lifecycle.Reply{Decision: "deny", Reason: "denied " + ev.Tool + " to " + ev.Role()}, nil
		case ToolEdit:
			return lifecycle.Reply{Context: "warning before " + ev.Tool, Notice: "warning"}, nil
		}
	case lifecycle.PostToolUse:
		if ev.Tool == ToolRead {
			return lifecycle.Reply{Context: "CTX after read"}, nil
		}
	}
	return lifecycle.Reply{}, nil
}

// TestCodecSessions replays the hooks the plugin forwarded in real
// OpenCode 1.18.33 sessions (testdata/sessions/*.jsonl, recorded by the
// probe plugin of internal/e2e/opencode; paths shortened to
// /home/user/proj) and compares the events and replies with golden files.
func TestCodecSessions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no recorded sessions")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			c := NewCodec(nil)
			var out bytes.Buffer
			for _, line := range fileLines(t, f) {
				req, err := DecodeRequest(line)
				if err != nil {
					t.Fatalf("request %s: %v", line[:min(len(line), 80)], err)
				}
				evs, err := c.Decode(context.Background(), req)
				if err != nil {
					t.Fatalf("request %d (%s): %v", req.ID, req.Hook, err)
				}
				var replies []lifecycle.Reply
				var shown []map[string]any
				for _, ev := range evs {
					if err := ev.Validate(); err != nil {
						t.Errorf("request %d: invalid event: %v", req.ID, err)
					}
					r, _ := scriptedRun(context.Background(), ev)
					replies = append(replies, r)
					shown = append(shown, eventJSON(ev))
				}
				rep := c.Encode(req, replies)
				b, _ := json.Marshal(map[string]any{"id": req.ID, "hook": req.Hook, "events": shown, "reply": rep})
				out.Write(append(b, '\n'))
			}
			golden(t, "sessions/"+name+".golden", out.Bytes())
		})
	}
}

func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), MaxLine)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}

// req builds a request of the given hook from input and output values.
func req(id uint64, pid int, hook string, input, output any) Request {
	r := Request{V: ProtocolVersion, ID: id, Hook: hook, PID: pid, Dir: "/p"}
	if input != nil {
		r.Input, _ = json.Marshal(input)
	}
	if output != nil {
		r.Output, _ = json.Marshal(output)
	}
	return r
}

func created(id, parent, agent string) map[string]any {
	info := map[string]any{"id": id}
	if parent != "" {
		info["parentID"], info["agent"] = parent, agent
	}
	return map[string]any{"event": map[string]any{"type": EventSessionCreated, "properties": map[string]any{"sessionID": id, "info": info}}}
}

func chat(session string, parts ...map[string]any) (map[string]any, map[string]any) {
	ps := []any{}
	for _, p := range parts {
		ps = append(ps, p)
	}
	return map[string]any{"sessionID": session}, map[string]any{"message": map[string]any{"id": "msg", "sessionID": session}, "parts": ps}
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func synthetic(s string) map[string]any {
	return map[string]any{"type": "text", "text": s, "synthetic": true}
}

func before(session, tool, call string, args any) (map[string]any, map[string]any) {
	return map[string]any{"tool": tool, "sessionID": session, "callID": call}, map[string]any{"args": args}
}

func after(session, tool, call string, args any, output any, meta map[string]any) (map[string]any, map[string]any) {
	return map[string]any{"tool": tool, "sessionID": session, "callID": call, "args": args}, map[string]any{"title": tool, "output": output, "metadata": meta}
}

// names lists events as name[/agent_type][:source].
func names(evs []lifecycle.Event) string {
	var s []string
	for _, ev := range evs {
		n := ev.Name
		if ev.AgentType != "" {
			n += "/" + ev.AgentType
		}
		if ev.Source != "" {
			n += ":" + ev.Source
		}
		s = append(s, n)
	}
	return strings.Join(s, " ")
}

func mustDecode(t *testing.T, c *Codec, r Request) []lifecycle.Event {
	t.Helper()
	evs, err := c.Decode(context.Background(), r)
	if err != nil {
		t.Fatalf("Decode %s: %v", r.Hook, err)
	}
	return evs
}

// TestCodecLifecycle follows sessions through the cases the recorded ones
// do not show: a background task's result, a resumed child, a root
// resumed by another OpenCode process, two processes disposing, messages
// with only synthetic parts.
func TestCodecLifecycle(t *testing.T) {
	c := NewCodec(nil)
	steps := []struct {
		r    Request
		want string
	}{
		{req(1, 100, HookEvent, created("ses_a", "", ""), nil), ""},
		{func() Request {
			i, o := chat("ses_a", text("hi"), synthetic("from another plugin"))
			return req(2, 100, HookChatMessage, i, o)
		}(), "session_start:startup user_message"},
		{func() Request { i, o := chat("ses_a", text("[plan] go")); return req(3, 100, HookChatMessage, i, o) }(), "user_message"},
		{req(4, 100, HookEvent, created("ses_b", "ses_a", "architect"), nil), ""},
		{func() Request { i, o := chat("ses_b", text("task prompt")); return req(5, 100, HookChatMessage, i, o) }(), "subagent_spawn/architect"},
		{func() Request { i, o := chat("ses_b", text("more")); return req(6, 100, HookChatMessage, i, o) }(), ""},
		// A background task's result arrives as a synthetic part of the
		// parent's next message.
		{func() Request {
			i, o := chat("ses_a", synthetic("<task id=\"ses_b\" state=\"completed\">\n<summary>Background task completed: x</summary>\n<task_result>\nDONE\n</task_result>\n</task>"))
			return req(7, 100, HookChatMessage, i, o)
		}(), "subagent_complete/architect"},
		// task_id resumes the child session.
		{func() Request { i, o := chat("ses_b", text("again")); return req(8, 100, HookChatMessage, i, o) }(), "subagent_resume/architect"},
		{func() Request {
			i, o := after("ses_a", ToolTask, "c1", map[string]any{"subagent_type": "architect", "task_id": "ses_b"}, "<task id=\"ses_b\" state=\"error\">\n<task_error>\nboom\n</task_error>\n</task>", map[string]any{"sessionId": "ses_b"})
			return req(9, 100, HookToolAfter, i, o)
		}(), "subagent_complete/architect post_tool_use"},
		// A background task's start reports state running: no completion.
		{func() Request {
			i, o := after("ses_a", ToolTask, "c2", map[string]any{"subagent_type": "tester"}, "<task id=\"ses_c\" state=\"running\">\n<summary>Background task started</summary>\n<task_result>\n…\n</task_result>\n</task>", map[string]any{"background": true})
			return req(10, 100, HookToolAfter, i, o)
		}(), "post_tool_use"},
		{req(11, 200, HookDispose, nil, nil), ""},
		{req(12, 100, HookDispose, nil, nil), "session_end"},
		{req(13, 100, HookDispose, nil, nil), ""},
		// The same root in a later OpenCode process: a resume.
		{func() Request { i, o := chat("ses_a", text("back")); return req(14, 300, HookChatMessage, i, o) }(), "session_start:resume user_message"},
		// A message of synthetic parts only says nothing of the user's.
		{func() Request { i, o := chat("ses_a", synthetic("note")); return req(15, 300, HookChatMessage, i, o) }(), ""},
	}
	for _, s := range steps {
		evs := mustDecode(t, c, s.r)
		if got := names(evs); got != s.want {
			t.Errorf("request %d (%s): events %q, want %q", s.r.ID, s.r.Hook, got, s.want)
		}
		for _, ev := range evs {
			if err := ev.Validate(); err != nil {
				t.Errorf("request %d: %v", s.r.ID, err)
			}
			if ev.Name != lifecycle.SessionStart && ev.Name != lifecycle.UserMessage && ev.Name != lifecycle.SessionEnd && ev.SessionID != "ses_a" {
				t.Errorf("request %d: %s in session %q, want the root ses_a", s.r.ID, ev.Name, ev.SessionID)
			}
			if ev.Name == lifecycle.SubagentComplete && s.r.ID == 9 && (ev.LastMessage == nil || *ev.LastMessage != "boom") {
				t.Errorf("the failed task's last message %v", ev.LastMessage)
			}
		}
	}
	// Tool calls in the child carry its agent id and role.
	i, o := before("ses_b", "nexus_nx_task_add", "c3", map[string]any{"title": "x"})
	evs := mustDecode(t, c, req(16, 300, HookToolBefore, i, o))
	if len(evs) != 1 || evs[0].AgentID != "ses_b" || evs[0].Role() != "architect" || evs[0].Tool != "nexus_nx_task_add" || evs[0].ToolInput["title"] != "x" {
		t.Errorf("child tool call %+v", evs)
	}
}

// TestCodecSharedRecord: a second nexus process (the per-hook fallback, or
// the child of another OpenCode process) reads what the first recorded
// through the state store: the child session's role survives.
func TestCodecSharedRecord(t *testing.T) {
	l, err := state.NewLayout(t.TempDir(), Name)
	if err != nil {
		t.Fatal(err)
	}
	store := StateStore{S: state.New(l, nil)}
	first, second := NewCodec(store), NewCodec(store)
	ctx := context.Background()
	mustDecode(t, first, req(1, 1, HookEvent, created("ses_root", "", ""), nil))
	i, o := chat("ses_root", text("hi"))
	mustDecode(t, first, req(2, 1, HookChatMessage, i, o))
	mustDecode(t, first, req(3, 1, HookEvent, created("ses_kid", "ses_root", "tester"), nil))
	i, o = before("ses_kid", ToolBash, "c1", map[string]any{"command": "ls"})
	evs := mustDecode(t, second, req(4, 1, HookToolBefore, i, o))
	if evs[0].AgentID != "ses_kid" || evs[0].Role() != "tester" || evs[0].SessionID != "ses_root" {
		t.Errorf("the second process sees %+v", evs[0])
	}
	// The root started in process 1 is not started again by the second
	// process of the same OpenCode process.
	i, o = chat("ses_root", text("again"))
	if got := names(mustDecode(t, second, req(5, 1, HookChatMessage, i, o))); got != "user_message" {
		t.Errorf("second process, same OpenCode: %s", got)
	}
	b, err := os.ReadFile(store.Path())
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeSessions(b)
	if err != nil || s.Get("ses_kid").Agent != "tester" || s.Get("ses_root").PID != 1 {
		t.Errorf("%s: %s (%v)", SessionsFile, b, err)
	}
	// A record that cannot be read is replaced, not trusted.
	if err := os.WriteFile(store.Path(), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := store.Load(ctx); err != nil || len(s.Sessions) != 0 {
		t.Errorf("a broken record loads as %+v, %v", s, err)
	}
}

func TestSessionsBounded(t *testing.T) {
	s := NewSessions()
	for i := range MaxSessions + 10 {
		s.Put(fmt.Sprintf("ses_%03d", i), &Session{})
	}
	if len(s.Sessions) != MaxSessions || s.Get("ses_009") != nil || s.Get("ses_010") == nil {
		t.Errorf("%d sessions kept; oldest kept %v", len(s.Sessions), s.Get("ses_010") != nil)
	}
	s.Put("ses_010", &Session{Agent: "x"})
	if s.Get("ses_010").Seq != 11 {
		t.Errorf("a session put again keeps its number: %d", s.Get("ses_010").Seq)
	}
	// A live root and a running subagent outlast finished sessions however
	// old they are.
	s = NewSessions()
	s.Put("root", &Session{PID: 1})
	s.Put("kid", &Session{Parent: "root", Agent: "tester", Spawned: true})
	for i := range MaxSessions + 10 {
		s.Put(fmt.Sprintf("done_%03d", i), &Session{Parent: "root", Done: true})
	}
	if s.Get("root") == nil || s.Get("kid") == nil || s.Get("done_011") != nil || s.Get("done_012") == nil || len(s.Sessions) != MaxSessions {
		t.Errorf("kept root %v, kid %v, %d in all", s.Get("root") != nil, s.Get("kid") != nil, len(s.Sessions))
	}
}

func TestCodecRefuses(t *testing.T) {
	c := NewCodec(nil)
	cases := []struct {
		name string
		r    Request
		want string
	}{
		{"unknown hook", req(1, 1, "chat.params", map[string]any{}, nil), `unknown OpenCode hook "chat.params"`},
		{"no session", req(1, 1, HookToolBefore, map[string]any{"tool": "bash"}, map[string]any{"args": map[string]any{}}), "tool.execute.before: no sessionID"},
		{"no tool", req(1, 1, HookToolBefore, map[string]any{"sessionID": "s"}, map[string]any{"args": map[string]any{}}), "tool.execute.before: no tool named"},
		{"args not an object", req(1, 1, HookToolBefore, map[string]any{"tool": "bash", "sessionID": "s"}, map[string]any{"args": "rm -rf /"}), "the bash call's args must be a JSON object"},
		{"huge number", Request{V: 1, ID: 1, Hook: HookToolBefore, Input: json.RawMessage(`{"tool":"bash","sessionID":"s"}`), Output: json.RawMessage(`{"args":{"n":1e999}}`)}, "number too large"},
		{"mistyped member", Request{V: 1, ID: 1, Hook: HookToolBefore, Input: json.RawMessage(`{"tool":7,"sessionID":"s"}`)}, "field tool must not be number"},
		{"chat without session", req(1, 1, HookChatMessage, map[string]any{}, map[string]any{"parts": []any{}}), "chat.message: no sessionID"},
		{"session.created without id", req(1, 1, HookEvent, map[string]any{"event": map[string]any{"type": EventSessionCreated}}, nil), "session.created: no session id"},
	}
	for _, tc := range cases {
		_, err := c.Decode(context.Background(), tc.r)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an InputError with %q", tc.name, err, tc.want)
		}
	}
}

func TestMCPName(t *testing.T) {
	for in, want := range map[string]string{
		"nexus_nx_task_add":    "nx_task_add",
		"nauro_check_decision": "check_decision",
		"nexus_":               "",
		"bash":                 "",
		"github_create_issue":  "",
		"nexusx_nx_task_add":   "",
		"mcp__nexus__nx_x":     "",
	} {
		if got := MCPName(in); got != want {
			t.Errorf("MCPName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTaskResult(t *testing.T) {
	cases := []struct {
		in        string
		ok        bool
		id, state string
		text      string
	}{
		{"<task id=\"ses_1\" state=\"completed\">\n<task_result>\nARCH-DONE the design\n</task_result>\n</task>", true, "ses_1", "completed", "ARCH-DONE the design"},
		{"<task id=\"ses_1\" state=\"completed\">\n<task_result>\n\n</task_result>\n</task>", true, "ses_1", "completed", ""},
		{"<task id=\"ses_1\" state=\"completed\">\n<task_result>\na </task_result> inside\n</task_result>\n</task>", true, "ses_1", "completed", "a </task_result> inside"},
		{"<task id=\"ses_2\" state=\"error\">\n<task_error>\nTask failed\n</task_error>\n</task>", true, "ses_2", "error", "Task failed"},
		{"<task id=\"ses_3\" state=\"running\">\n<task_result>\nx\n</task_result>\n</task>", false, "", "", ""},
		{"<task id=\"ses_3\" state=\"completed\">\nno result", false, "", "", ""},
		{"<task id=\"\" state=\"completed\">\n<task_result>\nx\n</task_result>", false, "", "", ""},
		{"The task said <task id=\"ses_1\" state=\"completed\">", false, "", "", ""},
		{"", false, "", "", ""},
	}
	for _, c := range cases {
		r, ok := parseTaskResult(c.in)
		if ok != c.ok || ok && (r.id != c.id || r.state != c.state || r.text != c.text) {
			t.Errorf("parseTaskResult(%q) = %+v %v", c.in, r, ok)
		}
	}
}

// TestEncode: what each hook's replies become, and a warning given before
// a call reaching the model with the call's result.
func TestEncode(t *testing.T) {
	c := NewCodec(nil)
	bi, bo := before("s", ToolEdit, "c1", map[string]any{})
	ai, ao := after("s", ToolEdit, "c1", map[string]any{}, "Edit applied successfully.", nil)
	cases := []struct {
		r       Request
		replies []lifecycle.Reply
		want    string
	}{
		{req(1, 1, HookChatMessage, nil, nil), []lifecycle.Reply{{Context: "A", Notice: "n"}, {}, {Context: " B\n"}}, `{"id":1,"parts":["A","B"]}`},
		{req(2, 1, HookToolBefore, bi, bo), []lifecycle.Reply{{Decision: "deny", Reason: "no"}}, `{"id":2,"block":"no"}`},
		{req(3, 1, HookToolBefore, bi, bo), []lifecycle.Reply{{Decision: "deny"}}, `{"id":3,"block":"nexus denied this tool call"}`},
		{req(4, 1, HookToolBefore, bi, bo), []lifecycle.Reply{{Context: "careful", Notice: "careful"}}, `{"id":4}`},
		{req(5, 1, HookToolAfter, ai, ao), []lifecycle.Reply{{Context: "after"}}, `{"id":5,"append":"careful\n\nafter"}`},
		{req(6, 1, HookToolAfter, ai, ao), []lifecycle.Reply{{}}, `{"id":6}`},
		{req(7, 1, HookToolAfter, ai, ao), []lifecycle.Reply{{Decision: "deny", Reason: "late"}}, `{"id":7}`},
		{req(8, 1, HookEvent, nil, nil), []lifecycle.Reply{{Context: "x"}}, `{"id":8}`},
		{req(9, 1, HookDispose, nil, nil), []lifecycle.Reply{{Context: "x", Notice: "y"}}, `{"id":9}`},
	}
	for _, tc := range cases {
		b, _ := json.Marshal(c.Encode(tc.r, tc.replies))
		if string(b) != tc.want {
			t.Errorf("request %d (%s): %s, want %s", tc.r.ID, tc.r.Hook, b, tc.want)
		}
	}
}

func TestHandleAndPolicy(t *testing.T) {
	c := NewCodec(nil)
	i, o := before("s", ToolBash, "c1", map[string]any{"command": "ls"})
	r := req(1, 1, HookToolBefore, i, o)
	boom := errors.New("engine broke")
	if _, err := c.Handle(context.Background(), r, func(context.Context, lifecycle.Event) (lifecycle.Reply, error) { return lifecycle.Reply{}, boom }); !errors.Is(err, boom) {
		t.Errorf("Handle returned %v, want the run error", err)
	}
	got, err := c.Handle(context.Background(), r, scriptedRun)
	if err != nil || got.ID != 1 || got.Block != "" {
		t.Errorf("Handle: %+v %v", got, err)
	}
	for _, f := range []func(Request, string) Reply{FailClosed, Unjudged, Unreadable} {
		if rep := f(r, "why"); rep.ID != 1 || !strings.Contains(rep.Block, "(why)") {
			t.Errorf("gate reply %+v", rep)
		}
		if rep := f(req(2, 1, HookChatMessage, nil, nil), "why"); rep.Block != "" || rep.ID != 2 {
			t.Errorf("a failure on chat.message must not block: %+v", rep)
		}
	}
}

func BenchmarkCodecToolBefore(b *testing.B) {
	c := NewCodec(nil)
	ctx := context.Background()
	mustDecode(&testing.T{}, c, req(1, 1, HookEvent, created("ses_de4d0cfadffe7jfF5bi6IaLWgU", "", ""), nil))
	line := []byte(`{"v":1,"id":2,"hook":"tool.execute.before","pid":1,"dir":"/home/user/proj","input":{"tool":"read","sessionID":"ses_de4d0cfadffe7jfF5bi6IaLWgU","callID":"call_read"},"output":{"args":{"filePath":".nexus/memory/lesson.md"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		r, err := DecodeRequest(line)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Handle(ctx, r, scriptedRun); err != nil {
			b.Fatal(err)
		}
	}
}
