package neutral

import (
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func TestDecode(t *testing.T) {
	_, ev, err := Decode([]byte(`{"event":"pre_tool_use","cwd":"/p","agent_id":"a","agent_type":"architect","tool":"apply_patch","tool_input":{"path":"x"},"tool_classes":["partial_file_edit"]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Name != lifecycle.PreToolUse || ev.Tool != "apply_patch" || ev.ToolClasses[0] != "partial_file_edit" || ev.Role() != "architect" || ev.Dir != "/p" {
		t.Errorf("event %+v", ev)
	}
	_, ev, err = Decode([]byte(`{"agent_id":"a","last_message":"done","files_touched":[]}`), "agent_complete")
	if err != nil || ev.Name != lifecycle.SubagentComplete || ev.FilesTouched == nil || *ev.LastMessage != "done" {
		t.Errorf("fixture name: %+v %v", ev, err)
	}
	for _, tt := range []struct{ payload, event, want string }{
		{`{"event":"pre_tool_use","tool":"x","colour":"red"}`, "", `unknown field "colour"`},
		{`{"event":"pre_tool_use","tool":3}`, "", "field tool has the wrong type"},
		{`{"event":"pre_tool_use","tool":"Bash","tool_input":{"n":1e999999}}`, "", "field tool_input holds a number too large for a 64-bit float (number 1e999999)"},
		{`{"event":"pre_tool_use"}`, "", "field tool is required"},
		{`{"event":"subagent_spawn"}`, "", "field agent_id is required"},
		{`{"event":"post_tool_use","tool":"x","status":"meh"}`, "", "must be ok or error"},
		{`{"event":"launch"}`, "", `unknown event "launch"`},
		{`{"event":"ignore"}`, "", `unknown event "ignore"`},
		{`{}`, "", `no "event"`},
		{`{"event":"session_start"}`, "session_end", `is a "session_start" event`},
		{`nope`, "", "expected one JSON object"},
		{`{"event":"session_end"} {}`, "", "more than one JSON value"},
	} {
		if _, _, err := Decode([]byte(tt.payload), tt.event); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.payload, err, tt.want)
		}
	}
}

func TestEncode(t *testing.T) {
	b, _ := Encode(lifecycle.Reply{})
	if strings.TrimSpace(string(b)) != "{}" {
		t.Errorf("empty reply %s", b)
	}
	b, _ = Encode(lifecycle.Reply{Decision: "deny", Reason: "<no>"})
	if strings.TrimSpace(string(b)) != `{"decision":"deny","reason":"<no>"}` {
		t.Errorf("deny %s", b)
	}
	if !strings.Contains(string(FailClosed("x")), `"decision":"deny"`) {
		t.Error("fail-closed reply does not deny")
	}
}
