package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		event   string // command-line event
		want    lifecycle.Event
		err     string
	}{
		{name: "session start", payload: `{"session_id":"s","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`,
			want: lifecycle.Event{Name: lifecycle.SessionStart, SessionID: "s", Dir: "/p", Source: "startup"}},
		{name: "compact start", payload: `{"hook_event_name":"SessionStart","source":"compact"}`,
			want: lifecycle.Event{Name: lifecycle.ContextCompact, Source: "compact"}},
		{name: "prompt", payload: `{"hook_event_name":"UserPromptSubmit","prompt":"[plan] x"}`,
			want: lifecycle.Event{Name: lifecycle.UserMessage, Prompt: "[plan] x"}},
		{name: "event from the command line", payload: `{"prompt":"hi"}`, event: "UserPromptSubmit",
			want: lifecycle.Event{Name: lifecycle.UserMessage, Prompt: "hi"}},
		{name: "subagent tool call", payload: `{"hook_event_name":"PreToolUse","agent_id":"a1","agent_type":"p:architect","tool_name":"Edit","tool_input":{"file_path":"/x"}}`,
			want: lifecycle.Event{Name: lifecycle.PreToolUse, AgentID: "a1", AgentType: "p:architect", Tool: "Edit", ToolInput: map[string]any{"file_path": "/x"}}},
		{name: "post ok", payload: `{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{},"tool_response":{"type":"text"}}`,
			want: lifecycle.Event{Name: lifecycle.PostToolUse, Tool: "Read", ToolInput: map[string]any{}, Status: "ok"}},
		{name: "post mcp error", payload: `{"hook_event_name":"PostToolUse","tool_name":"mcp__nexus__nx_task_update","tool_input":{},"tool_response":{"isError":true,"content":[{"type":"text","text":"Task id 9 not found"}]}}`,
			want: lifecycle.Event{Name: lifecycle.PostToolUse, Tool: "mcp__nexus__nx_task_update", ToolInput: map[string]any{}, Status: "error", Error: "Task id 9 not found"}},
		{name: "post success false", payload: `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_response":{"success":false,"error":"disk full"}}`,
			want: lifecycle.Event{Name: lifecycle.PostToolUse, Tool: "Write", ToolInput: map[string]any{}, Status: "error", Error: "disk full"}},
		{name: "post failure", payload: `{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"error":"Exit code 1"}`,
			want: lifecycle.Event{Name: lifecycle.PostToolUse, Tool: "Bash", ToolInput: map[string]any{"command": "false"}, Status: "error", Error: "Exit code 1"}},
		{name: "subagent start", payload: `{"hook_event_name":"SubagentStart","agent_id":"a1","agent_type":"nexus:architect"}`,
			want: lifecycle.Event{Name: lifecycle.SubagentSpawn, AgentID: "a1", AgentType: "nexus:architect"}},
		{name: "session end", payload: `{"hook_event_name":"SessionEnd","reason":"clear"}`, want: lifecycle.Event{Name: lifecycle.SessionEnd}},
		{name: "stop", payload: `{"hook_event_name":"Stop","stop_hook_active":false}`, want: lifecycle.Event{Name: lifecycle.Ignore}},
		{name: "post compact", payload: `{"hook_event_name":"PostCompact","trigger":"auto"}`, want: lifecycle.Event{Name: lifecycle.Ignore}},
		{name: "unknown fields are fine", payload: `{"hook_event_name":"SessionEnd","brand_new_field":{"x":1}}`, want: lifecycle.Event{Name: lifecycle.SessionEnd}},

		{name: "empty", payload: ``, err: "empty payload"},
		{name: "not an object", payload: `[1,2]`, err: "expected a JSON object"},
		{name: "invalid json", payload: `{"hook_event_name":`, err: "invalid JSON payload"},
		{name: "two values", payload: `{} {}`, err: "more than one JSON value"},
		{name: "no event", payload: `{"session_id":"s"}`, err: "no hook_event_name"},
		{name: "unknown event", payload: `{"hook_event_name":"Notification"}`, err: `unknown Claude Code hook event "Notification"`},
		{name: "mismatched event", payload: `{"hook_event_name":"PreToolUse","tool_name":"Read"}`, event: "PostToolUse", err: `is a "PreToolUse" event, but nexus was run for "PostToolUse"`},
		{name: "mistyped tool_name", payload: `{"hook_event_name":"PreToolUse","tool_name":7}`, err: "field tool_name must be a string"},
		{name: "mistyped agent_id", payload: `{"hook_event_name":"SubagentStart","agent_id":true}`, err: "field agent_id must be a string"},
		{name: "mistyped last message", payload: `{"hook_event_name":"SubagentStop","agent_id":"a","last_assistant_message":5}`, err: "field last_assistant_message must be a string"},
		{name: "missing tool_name", payload: `{"hook_event_name":"PostToolUse"}`, err: "field tool_name is required"},
		{name: "tool_input not an object", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, err: "tool_input must be a JSON object"},
		{name: "tool_input with a number out of range (issue 13.8)", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"n":1e999999}}`, err: "tool_input holds a number too large for a 64-bit float (number 1e999999)"},
		{name: "tool_input with a nested number out of range", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"a":{"b":[-1e400]}}}`, err: "holds a number too large for a 64-bit float (number -1e400"},
		{name: "missing prompt", payload: `{"hook_event_name":"UserPromptSubmit"}`, err: "field prompt is required"},
		{name: "missing agent id", payload: `{"hook_event_name":"SubagentStop"}`, err: "field agent_id is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ev, err := Decode([]byte(tt.payload), tt.event)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(ev)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("event\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestLastMessageFromTranscript(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agent.jsonl")
	lines := []string{
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"first"}]}}`,
		`not json`,
		`{"type":"assistant","message":{"role":"assistant","content":"plain string reply"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Read"}]}}`,
		`{"type":"user","message":{"role":"user","content":"thanks"}}`,
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"hook_event_name": "SubagentStop", "agent_id": "a", "agent_transcript_path": p})
	_, ev, err := Decode(payload, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.LastMessage == nil || *ev.LastMessage != "plain string reply" {
		t.Errorf("last message %v", ev.LastMessage)
	}
	// Not a regular file: never read.
	payload, _ = json.Marshal(map[string]any{"hook_event_name": "SubagentStop", "agent_id": "a", "agent_transcript_path": "/dev/zero"})
	if _, ev, _ = Decode(payload, ""); ev.LastMessage != nil {
		t.Errorf("last message from a device: %q", *ev.LastMessage)
	}
	// The payload's own field wins; a missing transcript leaves it unset.
	payload, _ = json.Marshal(map[string]any{"hook_event_name": "SubagentStop", "agent_id": "a", "agent_transcript_path": filepath.Join(dir, "gone.jsonl")})
	if _, ev, _ = Decode(payload, ""); ev.LastMessage != nil {
		t.Errorf("last message from a missing transcript: %q", *ev.LastMessage)
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		event string
		r     lifecycle.Reply
		want  string
	}{
		{SessionStart, lifecycle.Reply{Context: "ctx"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}`},
		{SessionStart, lifecycle.Reply{}, ``},
		{UserPromptSubmit, lifecycle.Reply{Context: "<b>&", Notice: "did it"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<b>&"},"systemMessage":"did it"}`},
		{SubagentStart, lifecycle.Reply{Context: "you are"}, `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"you are"}}`},
		{PreToolUse, lifecycle.Reply{Decision: "deny", Reason: "no"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{PreToolUse, lifecycle.Reply{Context: "warn", Notice: "warn"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"warn"},"systemMessage":"warn"}`},
		{PreToolUse, lifecycle.Reply{}, ``},
		{PostToolUse, lifecycle.Reply{Context: "from a plugin"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"from a plugin"}}`},
		{PostToolUse, lifecycle.Reply{}, ``},
		{PostToolUseFailure, lifecycle.Reply{Context: "ignored"}, ``},
		{SubagentStop, lifecycle.Reply{Context: "x", Notice: "verify task 1"}, `{"systemMessage":"verify task 1"}`},
		{SessionEnd, lifecycle.Reply{Notice: "3 tasks open"}, `{"systemMessage":"3 tasks open"}`},
		{Stop, lifecycle.Reply{Context: "x"}, ``},
	}
	for _, tt := range tests {
		b, err := Encode(tt.event, tt.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != tt.want {
			t.Errorf("%s %+v:\n got %s\nwant %s", tt.event, tt.r, got, tt.want)
		}
	}
	var fc struct {
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(Host{}.Codec().FailClosed("bad payload"), &fc); err != nil || fc.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(fc.HookSpecificOutput.PermissionDecisionReason, "bad payload") {
		t.Errorf("fail-closed reply %+v %v", fc, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"SubagentStop","agent_id":"a","last_assistant_message":"x"}`,
		`{"hook_event_name":"PostToolUse","tool_name":"x","tool_response":{"isError":true}}`,
		`{}`, `[]`, `{"prompt":1}`, ``,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Read"}`), "PostToolUse")
	// The event may also come from the command line (nexus hook EVENT).
	f.Fuzz(func(t *testing.T, data []byte, event string) {
		_, ev, err := Decode(data, event)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if _, ok := lifecycle.CanonicalName(ev.Name); !ok {
			t.Fatalf("decoded an unknown event %q", ev.Name)
		}
		if ev.Name != lifecycle.Ignore {
			if err := ev.Validate(); err != nil {
				t.Fatalf("decoded an invalid event: %v", err)
			}
		}
	})
}

// Every text nexus hands Claude Code stays within MaxText: 9,999 units pass
// whole, anything longer is cut to at most 9,999 with a note.
func TestEncodeEnforcesTheTextLimit(t *testing.T) {
	for _, n := range []int{MaxText, MaxText + 1, 3 * MaxText} {
		long := strings.Repeat("y", n)
		for _, ev := range []string{SessionStart, UserPromptSubmit, SubagentStart, PostToolUse, PreToolUse} {
			r := lifecycle.Reply{Context: long, Notice: long}
			if ev == PreToolUse {
				r = lifecycle.Reply{Decision: "deny", Reason: long}
			}
			b, err := Encode(ev, r)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Specific struct {
					Context string `json:"additionalContext"`
					Reason  string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
				System string `json:"systemMessage"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			for _, got := range []string{out.Specific.Context, out.Specific.Reason, out.System} {
				if got == "" {
					continue
				}
				if lifecycle.TextLen(got) > MaxText {
					t.Errorf("%s: %d units reach Claude Code", ev, lifecycle.TextLen(got))
				}
				if n == MaxText && got != long {
					t.Errorf("%s: text of exactly %d units was changed", ev, MaxText)
				}
				if n > MaxText && !strings.Contains(got, "nexus cut this message") {
					t.Errorf("%s: cut silently", ev)
				}
			}
		}
	}
}
