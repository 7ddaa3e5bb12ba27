package neutral

import (
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// FuzzDecode: no payload makes the neutral decoder panic; a rejected one
// gets a one-line error (it becomes the single stderr line of `nexus
// hook`), and an accepted one is a known, valid event whose reply encodes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"event":"pre_tool_use","cwd":"/p","agent_id":"a","agent_type":"architect","tool":"apply_patch","tool_input":{"path":"x"},"tool_classes":["partial_file_edit"]}`,
		`{"event":"post_tool_use","tool":"x","status":"error","error":"boom"}`,
		`{"event":"subagent_complete","agent_id":"a","last_message":"done","files_touched":["a.go"]}`,
		`{"event":"user_message","prompt":"[plan] x"}`,
		`{"event":"session_start"} {}`, `{}`, `[]`, `nope`, ``,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{"agent_id":"a","last_message":"done","files_touched":[]}`), "agent_complete")
	f.Add([]byte(`{"event":"session_start"}`), "session_end")
	f.Fuzz(func(t *testing.T, data []byte, event string) {
		_, ev, err := Decode(data, event)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if _, ok := lifecycle.CanonicalName(ev.Name); !ok || ev.Name == lifecycle.Ignore {
			t.Fatalf("decoded an unknown event %q", ev.Name)
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("decoded an invalid event: %v", err)
		}
		if _, err := Encode(lifecycle.Reply{Context: ev.Prompt}); err != nil {
			t.Fatalf("encode: %v", err)
		}
	})
}
