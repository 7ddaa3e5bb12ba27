package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func post(t *testing.T, url string, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// assemble reads an SSE stream the way a client does and rebuilds the
// message's blocks, checking the event order.
func assemble(t *testing.T, resp *http.Response) (blocks []map[string]any, stop string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var order []string
	partial := map[int]*strings.Builder{}
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
			continue
		}
		v, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(v), &ev); err != nil || ev["type"] != name {
			t.Fatalf("event %s: data %s (%v)", name, v, err)
		}
		order = append(order, name)
		switch name {
		case "content_block_start":
			blocks = append(blocks, ev["content_block"].(map[string]any))
			partial[len(blocks)-1] = &strings.Builder{}
		case "content_block_delta":
			d := ev["delta"].(map[string]any)
			i := int(ev["index"].(float64))
			switch d["type"] {
			case "text_delta":
				blocks[i]["text"] = blocks[i]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[i].WriteString(d["partial_json"].(string))
			}
		case "content_block_stop":
			i := int(ev["index"].(float64))
			if blocks[i]["type"] == "tool_use" {
				var in any
				if err := json.Unmarshal([]byte(partial[i].String()), &in); err != nil {
					t.Fatalf("tool input %q: %v", partial[i], err)
				}
				blocks[i]["input"] = in
			}
		case "message_delta":
			stop = ev["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	if order[0] != "message_start" || order[len(order)-1] != "message_stop" || order[len(order)-2] != "message_delta" {
		t.Fatalf("event order %v", order)
	}
	return blocks, stop
}

func TestScriptedTurns(t *testing.T) {
	s := New(
		Turn{Name: "first", When: Prompt("hello"), Reply: Reply{Text: "calling", Tools: []ToolUse{{ID: "toolu_1", Name: "Read", Input: map[string]any{"file_path": "/x"}}}}},
		Turn{Name: "second", When: After("toolu_1"), Reply: Reply{Text: "done"}},
		Turn{Name: "agent", When: SystemHas("You are the architect"), Reply: Reply{Text: "architect here"}, Repeat: true},
		Turn{Name: "never", When: Prompt("not sent")},
	)
	defer s.Close()
	url := s.URL + "/v1/messages"

	tests := []struct {
		name       string
		body       string
		wantTurn   string
		wantBlocks []map[string]any
		wantStop   string
	}{
		{"prompt, with a trailing system message", `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"say hello"}]},{"role":"system","content":"context"}]}`,
			"first", []map[string]any{{"type": "text", "text": "calling"}, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": map[string]any{"file_path": "/x"}}}, "tool_use"},
		{"used once only", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello again"}]}`,
			"", []map[string]any{{"type": "text", "text": DefaultText}}, "end_turn"},
		{"tool result", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"file text"}]}]}`,
			"second", []map[string]any{{"type": "text", "text": "done"}}, "end_turn"},
		{"system prompt, repeating", `{"model":"m","stream":true,"system":[{"type":"text","text":"You are the architect."}],"messages":[{"role":"user","content":"design"}]}`,
			"agent", []map[string]any{{"type": "text", "text": "architect here"}}, "end_turn"},
		{"repeats", `{"model":"m","stream":true,"system":"You are the architect.","messages":[{"role":"user","content":"again"}]}`,
			"agent", []map[string]any{{"type": "text", "text": "architect here"}}, "end_turn"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks, stop := assemble(t, post(t, url, tc.body))
			if !reflect.DeepEqual(blocks, tc.wantBlocks) || stop != tc.wantStop {
				t.Errorf("got %v %s, want %v %s", blocks, stop, tc.wantBlocks, tc.wantStop)
			}
			reqs := s.Messages()
			if len(reqs) != i+1 || reqs[i].Turn != tc.wantTurn {
				t.Fatalf("request %d answered by %q, want %q", i, reqs[i].Turn, tc.wantTurn)
			}
		})
	}
	if got := s.Unused(); !reflect.DeepEqual(got, []string{"never"}) {
		t.Errorf("Unused() = %v", got)
	}
	req, ok := s.Answered("second")
	if !ok {
		t.Fatal("Answered(second)")
	}
	if res, ok := req.Messages.ToolResult("toolu_1"); !ok || res.Content.Text() != "file text\n" {
		t.Errorf("ToolResult = %+v, %v", res, ok)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := New()
	defer s.Close()
	// Non-streaming messages come back as one JSON message.
	resp := post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		Type       string           `json:"type"`
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Type != "message" || msg.Content[0]["text"] != DefaultText || msg.StopReason != "end_turn" {
		t.Errorf("non-streaming: %+v %v", msg, err)
	}
	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	resp = post(t, s.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil || count.InputTokens <= 0 {
		t.Errorf("count_tokens: %+v %v", count, err)
	}
	if resp := post(t, s.URL+"/v1/messages", `not json`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
	models, err := http.Get(s.URL + "/v1/models")
	if err != nil || models.StatusCode != http.StatusOK {
		t.Fatalf("models: %v %v", models, err)
	}
	models.Body.Close()
	unknown, err := http.Get(s.URL + "/v1/elsewhere")
	if err != nil || unknown.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %v %v", unknown, err)
	}
	unknown.Body.Close()
	// Everything is recorded, the bad body too; only Messages calls count
	// as messages.
	if n, m := len(s.Requests()), len(s.Messages()); n != 5 || m != 1 {
		t.Errorf("recorded %d requests, %d messages; want 5, 1", n, m)
	}
}
