package fakechat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMessageForms(t *testing.T) {
	tests := []struct {
		name, body  string
		wantLast    string
		wantAll     string
		wantSystem  string
		wantResults []string
		wantErr     bool
	}{
		{"string content", `{"messages":[{"role":"user","content":"hi"}]}`, "hi\n", "hi\n", "", nil, false},
		{"system messages and parts", `{"messages":[{"role":"system","content":"S1"},{"role":"system","content":"S2"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`, "a\n", "S1\nS2\na\n", "S1\nS2\n", nil, false},
		{"null assistant content and tool results", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"x","content":"r"}]}`, "r\n", "u\nr\n", "", []string{"x"}, false},
		{"only the results after the last assistant message", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":""},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"assistant","content":"later"},{"role":"user","content":"next"}]}`, "next\n", "u\n\n1\nlater\nnext\n", "", nil, false},
		{"content of the wrong type", `{"messages":[{"role":"user","content":3}]}`, "", "", "", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r ChatRequest
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
			if got := r.SystemText(); got != tc.wantSystem {
				t.Errorf("SystemText = %q, want %q", got, tc.wantSystem)
			}
			var ids []string
			for _, m := range r.Results() {
				ids = append(ids, m.ToolCallID)
			}
			if !reflect.DeepEqual(ids, tc.wantResults) {
				t.Errorf("Results = %v, want %v", ids, tc.wantResults)
			}
		})
	}
}

func TestMatchers(t *testing.T) {
	var r ChatRequest
	body := `{"messages":[{"role":"system","content":"You are the architect"},{"role":"user","content":"design it"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"file"}],"tools":[{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object"}}}]}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    Matcher
		want bool
	}{
		{"a tool result is not a prompt", Prompt("design"), false},
		{"after the call", After("c1"), true},
		{"after another call", After("c2"), false},
		{"system", SystemHas("architect"), true},
		{"any text", AnyText("file"), true},
		{"tool offered", HasTool("read"), true},
		{"tool not offered", HasTool("write"), false},
		{"all", All(After("c1"), SystemHas("architect")), true},
		{"not", Not(After("c1")), false},
		{"not a title", IsTitle, false},
	}
	for _, tc := range tests {
		if got := tc.m(&r); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
	if tool, ok := r.Tool("read"); !ok || tool.Function.Description != "Read a file" || string(tool.Function.Parameters) != `{"type":"object"}` {
		t.Errorf("Tool(read) = %+v, %v", tool, ok)
	}
}

// FuzzChatRequest: any body either fails to decode or gives a request
// whose accessors and matchers work.
func FuzzChatRequest(f *testing.F) {
	f.Add(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"read"}}]}`)
	f.Add(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"x"}]},{"role":"tool","tool_call_id":"x","content":[{"type":"text","text":"r"}]}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var r ChatRequest
		if json.Unmarshal([]byte(body), &r) != nil {
			return
		}
		all := r.AllText()
		for _, m := range r.Messages {
			if !strings.Contains(all, m.Content.Text()) {
				t.Fatalf("AllText lacks the text of a %s message", m.Role)
			}
		}
		r.Last()
		r.Results()
		r.ToolNames()
		r.FirstUserText()
		r.ToolResult("x")
		Prompt("hi")(&r)
		After("x")(&r)
		IsTitle(&r)
	})
}
