package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// schemaFile names Codex's JSON schema for an event's hook input or
// output (testdata/schemas: the schemas compiled into the 0.169.0 binary,
// docs/codex-notes.md §12).
func schemaFile(event, kind string) string {
	return filepath.Join("testdata", "schemas", strings.ReplaceAll(EventKey(event), "_", "-")+".command."+kind+".json")
}

func compileSchema(t testing.TB, file string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:codex:"+filepath.Base(file), doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:codex:" + filepath.Base(file))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDecodeRealPayloads decodes every payload Codex 0.169.0 sent in the
// exploration runs (testdata/payloads, one per event, tool and agent kind)
// into the golden lifecycle event, after checking each against Codex's
// own input schema.
func TestDecodeRealPayloads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	if err != nil || len(files) < 20 {
		t.Fatalf("payloads: %v (%d)", err, len(files))
	}
	wantName := map[string]string{
		SessionStart: lifecycle.SessionStart, UserPromptSubmit: lifecycle.UserMessage, PreToolUse: lifecycle.PreToolUse,
		PostToolUse: lifecycle.PostToolUse, SubagentStart: lifecycle.SubagentSpawn, SubagentStop: lifecycle.SubagentComplete,
		SessionEnd: lifecycle.SessionEnd, Stop: lifecycle.Ignore, PreCompact: lifecycle.Ignore, PostCompact: lifecycle.Ignore,
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			hostEvent := PeekEvent(data)
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			if err := compileSchema(t, schemaFile(hostEvent, "input")).Validate(v); err != nil {
				t.Fatalf("the payload does not fit Codex's input schema: %v", err)
			}
			got, ev, err := Decode(data, "")
			if err != nil {
				t.Fatal(err)
			}
			if got != hostEvent {
				t.Errorf("Decode names the event %q, the payload %q", got, hostEvent)
			}
			want := wantName[hostEvent]
			if hostEvent == SessionStart && ev.Source == "compact" {
				want = lifecycle.ContextCompact
			}
			if ev.Name != want {
				t.Errorf("%s → %s, want %s", hostEvent, ev.Name, want)
			}
			if err := ev.Validate(); err != nil {
				t.Errorf("the lifecycle event does not validate: %v", err)
			}
			// Same answer with the event named on the command line.
			if _, ev2, err := Decode(data, hostEvent); err != nil || !sameEvent(ev, ev2) {
				t.Errorf("Decode with the event given: %+v, %v", ev2, err)
			}
			out, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("payloads", name+".golden"), append(out, '\n'))
		})
	}
}

func sameEvent(a, b lifecycle.Event) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, data, event, wantEvent, want string
	}{
		{"empty", "", "", "", "empty payload"},
		{"not an object", "[1]", "", "", "expected a JSON object"},
		{"broken PreToolUse", `{"hook_event_name":"PreToolUse","tool_name":`, "", PreToolUse, "invalid JSON"},
		{"too deep", `{"hook_event_name":"PreToolUse","tool_input":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "", PreToolUse, "refused"},
		{"wrong type", `{"hook_event_name":"PreToolUse","tool_name":5}`, "", PreToolUse, "field tool_name must be a string"},
		{"no event", `{"session_id":"s"}`, "", "", "no hook_event_name"},
		{"event mismatch", `{"hook_event_name":"Stop"}`, PreToolUse, PreToolUse, `is a "Stop" event`},
		{"unknown event", `{"hook_event_name":"PostToolUseFailure"}`, "", "PostToolUseFailure", "unknown Codex hook event"},
		{"no tool name", `{"hook_event_name":"PreToolUse","tool_input":{}}`, "", PreToolUse, "tool_name is required"},
		{"tool input not an object", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, "", PreToolUse, "must be a JSON object"},
		{"prompt missing", `{"hook_event_name":"UserPromptSubmit"}`, "", UserPromptSubmit, "prompt is required"},
		{"subagent without id", `{"hook_event_name":"SubagentStart","agent_type":"architect"}`, "", SubagentStart, "agent_id is required"},
		{"two values", `{"hook_event_name":"Stop"} {}`, "", Stop, "more than one JSON value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := Decode([]byte(c.data), c.event)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode = %v; want an InputError saying %q", err, c.want)
			}
			if got != c.wantEvent {
				t.Errorf("event %q, want %q", got, c.wantEvent)
			}
		})
	}
}

func TestResponseStatus(t *testing.T) {
	for _, c := range []struct{ raw, status, err string }{
		{`"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\n"`, lifecycle.StatusOK, ""},
		{`"Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed"`, lifecycle.StatusError, "Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed"},
		{`"smoke\n"`, lifecycle.StatusOK, ""},
		{`{"content":[{"type":"text","text":"{\"active\":false}"}],"structuredContent":{"active":false}}`, lifecycle.StatusOK, ""},
		{`{"content":[{"type":"text","text":"no such task"}],"isError":true}`, lifecycle.StatusError, "no such task"},
		{`{"isError":true}`, lifecycle.StatusError, "the tool reported an error"},
		{``, lifecycle.StatusOK, ""},
		{`null`, lifecycle.StatusOK, ""},
	} {
		status, msg := responseStatus(json.RawMessage(c.raw))
		if status != c.status || msg != c.err {
			t.Errorf("responseStatus(%s) = %q, %q; want %q, %q", c.raw, status, msg, c.status, c.err)
		}
	}
}

// TestEncode pins the exact JSON each reply becomes, and checks every
// output against Codex's output schema for the event (Codex runs the call
// untouched when an output breaks its schema).
func TestEncode(t *testing.T) {
	for _, c := range []struct {
		event string
		reply lifecycle.Reply
		want  string
	}{
		{PreToolUse, lifecycle.Reply{Decision: "deny", Reason: "architect may not edit src/a.go"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"architect may not edit src/a.go"}}`},
		{PreToolUse, lifecycle.Reply{Decision: "deny"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nexus denied this tool call"}}`},
		{PreToolUse, lifecycle.Reply{Context: "warned <&>", Notice: "n"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"warned <&>"},"systemMessage":"n"}`},
		{PreToolUse, lifecycle.Reply{}, ``},
		{SessionStart, lifecycle.Reply{Context: "ctx"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}`},
		{UserPromptSubmit, lifecycle.Reply{Context: "plan", Notice: "activated"},
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"plan"},"systemMessage":"activated"}`},
		{SubagentStart, lifecycle.Reply{Context: "you are the architect"}, `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"you are the architect"}}`},
		{PostToolUse, lifecycle.Reply{Context: "note"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note"}}`},
		{SubagentStop, lifecycle.Reply{Context: "ignored", Notice: "done"}, `{"systemMessage":"done"}`},
		{SubagentStop, lifecycle.Reply{Context: "ignored"}, ``},
		{Stop, lifecycle.Reply{Notice: "s"}, `{"systemMessage":"s"}`},
		{PreCompact, lifecycle.Reply{Notice: "s"}, `{"systemMessage":"s"}`},
		{PostCompact, lifecycle.Reply{Context: "x"}, ``},
		{Interrupt, lifecycle.Reply{Notice: "i"}, `{"systemMessage":"i"}`},
		{PermissionRequest, lifecycle.Reply{Notice: "p"}, `{"systemMessage":"p"}`},
		{SessionEnd, lifecycle.Reply{Context: "x", Notice: "bye"}, ``},
	} {
		got, err := Encode(c.event, c.reply)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSuffix(string(got), "\n") != c.want {
			t.Errorf("Encode(%s, %+v)\n got %s\nwant %s", c.event, c.reply, got, c.want)
		}
		if len(got) > 0 {
			var v any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatal(err)
			}
			if err := compileSchema(t, schemaFile(c.event, "output")).Validate(v); err != nil {
				t.Errorf("Encode(%s) breaks Codex's output schema: %v", c.event, err)
			}
		}
	}
	c := Host{}.Codec()
	for _, b := range [][]byte{c.FailClosed("the gate is broken"), c.Unreadable("bad JSON"), c.Unjudged("nexus.yaml is not YAML")} {
		var v any
		if err := json.Unmarshal(b, &v); err != nil || !strings.Contains(string(b), `"permissionDecision":"deny"`) {
			t.Errorf("denial %s: %v", b, err)
		}
		if err := compileSchema(t, schemaFile(PreToolUse, "output")).Validate(v); err != nil {
			t.Errorf("denial breaks Codex's output schema: %v", err)
		}
	}
	if !Gated(PreToolUse) || Gated(PostToolUse) {
		t.Error("Gated")
	}
}

// TestEncodeContextLimit: 10,000 bytes reach the model whole (measured);
// more are cut with a note, to at most 10,000 bytes of valid UTF-8.
func TestEncodeContextLimit(t *testing.T) {
	exact := strings.Repeat("e", MaxContextBytes)
	for _, c := range []struct {
		name, text string
		whole      bool
	}{
		{"exactly the limit", exact, true},
		{"one byte over", exact + "b", false},
		{"multi-byte text", strings.Repeat("ü€😀\n", 2000), false},
		{"one long line", strings.Repeat("x", 50_000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Encode(UserPromptSubmit, lifecycle.Reply{Context: c.text})
			if err != nil {
				t.Fatal(err)
			}
			var o struct {
				HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				t.Fatal(err)
			}
			got := o.HookSpecificOutput.AdditionalContext
			if c.whole != (got == c.text) {
				t.Errorf("whole = %v, want %v", got == c.text, c.whole)
			}
			if len(got) > MaxContextBytes || !utf8.ValidString(got) {
				t.Errorf("context of %d bytes (valid UTF-8: %v)", len(got), utf8.ValidString(got))
			}
			if !c.whole && !strings.Contains(got, "nexus cut this message") {
				t.Errorf("a cut context does not say so: …%s", got[max(0, len(got)-200):])
			}
		})
	}
}

func BenchmarkDecodePreToolUse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "payloads", "patch-PreToolUse-apply_patch.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Decode(data, ""); err != nil {
			b.Fatal(err)
		}
	}
}
