package fakechat

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

// assembled is a streamed answer rebuilt the way @ai-sdk/openai-compatible
// rebuilds it: text deltas appended, a tool call opened by a delta with its
// id and name and completed by the argument deltas of the same index.
type assembled struct {
	Text   string
	Calls  []ToolCall
	Finish string
	Usage  map[string]any
}

func assemble(t *testing.T, resp *http.Response) assembled {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var a assembled
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		if done {
			t.Fatalf("data after [DONE]: %q", data)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Role      string `json:"role"`
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int     `json:"index"`
						ID       *string `json:"id"`
						Type     string  `json:"type"`
						Function struct {
							Name      *string `json:"name"`
							Arguments string  `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if c.Usage != nil {
			a.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			a.Text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == len(a.Calls) {
					// The client throws without an id and a name here.
					if tc.ID == nil || tc.Function.Name == nil || tc.Type != "function" {
						t.Fatalf("the first delta of tool call %d lacks its id, name or type: %s", tc.Index, data)
					}
					a.Calls = append(a.Calls, ToolCall{ID: *tc.ID, Type: tc.Type, Function: FunctionCall{Name: *tc.Function.Name}})
				} else if tc.Index != len(a.Calls)-1 {
					t.Fatalf("tool call delta for index %d out of order: %s", tc.Index, data)
				}
				a.Calls[tc.Index].Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.Finish = *ch.FinishReason
			}
		}
	}
	if !done {
		t.Fatal("the stream did not end with data: [DONE]")
	}
	return a
}

func TestScriptedTurns(t *testing.T) {
	s := New(
		Turn{Name: "first", When: Prompt("hello"), Reply: Reply{Text: "calling", Calls: []Call{
			{ID: "call_1", Name: "bash", Args: map[string]any{"command": "ls"}},
			{ID: "call_2", Name: "nexus_nx_task_list"},
		}}},
		Turn{Name: "second", When: All(After("call_1"), After("call_2")), Reply: Reply{Text: "done"}},
		Turn{Name: "agent", When: SystemHas("You are the architect"), Reply: Reply{Text: "architect here"}, Repeat: true},
		Turn{Name: "never", When: Prompt("not sent")},
	)
	defer s.Close()
	url := s.URL + "/chat/completions"

	tests := []struct {
		name     string
		body     string
		wantTurn string
		want     assembled
	}{
		{"prompt with parts, two calls", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are opencode"},{"role":"user","content":[{"type":"text","text":"say hello"},{"type":"text","text":"synthetic context"}]}]}`,
			"first", assembled{Text: "calling", Finish: "tool_calls", Calls: []ToolCall{
				{ID: "call_1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}},
				{ID: "call_2", Type: "function", Function: FunctionCall{Name: "nexus_nx_task_list", Arguments: `{}`}},
			}, Usage: map[string]any{"prompt_tokens": 100.0, "completion_tokens": 10.0, "total_tokens": 110.0}}},
		{"a used turn does not answer again", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello again"}]}`,
			"", assembled{Text: DefaultText, Finish: "stop"}},
		{"both tool results", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"nexus_nx_task_list","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"file text"},{"role":"tool","tool_call_id":"call_2","content":"{\"exists\":false}"}]}`,
			"second", assembled{Text: "done", Finish: "stop"}},
		{"system prompt, repeating", `{"model":"m","stream":true,"messages":[{"role":"system","content":"You are the architect."},{"role":"user","content":"design"}]}`,
			"agent", assembled{Text: "architect here", Finish: "stop"}},
		{"repeats", `{"model":"m","stream":true,"messages":[{"role":"system","content":"You are the architect."},{"role":"user","content":"again"}]}`,
			"agent", assembled{Text: "architect here", Finish: "stop"}},
		{"title requests use no turn", `{"model":"m","stream":true,"messages":[{"role":"system","content":"You are a title generator. You output ONLY a thread title."},{"role":"user","content":"Generate a title for this conversation:\n"},{"role":"user","content":"You are the architect: hello"}]}`,
			TitleTurn, assembled{Text: TitleText, Finish: "stop"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := assemble(t, post(t, url, tc.body))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			reqs := s.Requests()
			if len(reqs) != i+1 || reqs[i].Turn != tc.wantTurn {
				t.Fatalf("request %d answered by %q, want %q", i, reqs[i].Turn, tc.wantTurn)
			}
		})
	}
	if got := s.Unused(); !reflect.DeepEqual(got, []string{"never"}) {
		t.Errorf("Unused() = %v", got)
	}
	if n, m := len(s.Chats()), len(s.Titles()); n != 5 || m != 1 {
		t.Errorf("%d chats and %d titles, want 5 and 1", n, m)
	}
	req, ok := s.Answered("second")
	if !ok {
		t.Fatal("Answered(second)")
	}
	if res, ok := req.Chat.ToolResult("call_2"); !ok || res.Content.Text() != "{\"exists\":false}\n" {
		t.Errorf("ToolResult = %+v, %v", res, ok)
	}
	first, _ := s.Answered("first")
	if got := first.Chat.FirstUserText(); got != "say hello\nsynthetic context\n" {
		t.Errorf("FirstUserText = %q", got)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := New(Turn{Name: "call", When: Prompt("go"), Reply: Reply{Calls: []Call{{ID: "call_x", Name: "write", Args: json.RawMessage(`{"filePath":"a","content":"b"}`)}}}})
	defer s.Close()
	// Without stream, one chat.completion object.
	resp := post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}]}`)
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   string     `json:"content"`
				ToolCalls []ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || c.Object != "chat.completion" || c.Choices[0].FinishReason != "tool_calls" ||
		c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"filePath":"a","content":"b"}` {
		t.Errorf("non-streaming: %+v %v", c, err)
	}
	if resp := post(t, s.URL+"/chat/completions", `not json`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
	models, err := http.Get(s.URL + "/models")
	if err != nil || models.StatusCode != http.StatusOK {
		t.Fatalf("models: %v %v", models, err)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(models.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "m" {
		t.Errorf("models: %+v %v", list, err)
	}
	models.Body.Close()
	unknown, err := http.Get(s.URL + "/v1/elsewhere")
	if err != nil || unknown.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %v %v", unknown, err)
	}
	unknown.Body.Close()
	// Everything is recorded, the bad body too; only parsed chat calls
	// count as chats.
	if n, m := len(s.Requests()), len(s.Chats()); n != 4 || m != 1 {
		t.Errorf("recorded %d requests, %d chats; want 4, 1", n, m)
	}
}
