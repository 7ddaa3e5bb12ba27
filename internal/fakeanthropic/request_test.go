package fakeanthropic

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestContentForms(t *testing.T) {
	tests := []struct {
		name, body string
		wantLast   string
		wantAll    string
		wantErr    bool
	}{
		{"string content", `{"messages":[{"role":"user","content":"hi"}]}`, "hi\n", "hi\n", false},
		{"system string and blocks", `{"system":"S","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"}]}]}`, "a\n", "S\na\n", false},
		{"trailing system message skipped by Last", `{"messages":[{"role":"user","content":"u"},{"role":"system","content":"ctx"}]}`, "u\n", "u\nctx\n", false},
		{"tool result with block content", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"r"}]}]}]}`, "r\n", "r\n", false},
		{"content of the wrong type", `{"messages":[{"role":"user","content":3}]}`, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r MessagesRequest
			err := json.Unmarshal([]byte(tc.body), &r)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := r.Last().Content.Text(); got != tc.wantLast {
				t.Errorf("Last = %q, want %q", got, tc.wantLast)
			}
			if got := r.AllText(); got != tc.wantAll {
				t.Errorf("AllText = %q, want %q", got, tc.wantAll)
			}
		})
	}
}

// FuzzMessagesRequest: any body either fails to decode or gives a request
// whose accessors and matchers work.
func FuzzMessagesRequest(f *testing.F) {
	f.Add(`{"system":"S","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Read"}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"r"}]},{"role":"system","content":"c"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var r MessagesRequest
		if json.Unmarshal([]byte(body), &r) != nil {
			return
		}
		all := r.AllText()
		if !strings.Contains(all, r.SystemText()) {
			t.Fatalf("AllText lacks the system prompt")
		}
		r.Last()
		r.ToolNames()
		r.FirstUserText()
		r.ToolResult("x")
		Prompt("hi")(&r)
		After("x")(&r)
	})
}
