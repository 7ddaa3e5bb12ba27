package fakeresponses

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
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

// assemble reads an SSE stream the way Codex does and returns the output
// items of output_item.done, after checking that the deltas rebuild each
// item's text, arguments or input, that every event's data names its
// event, that sequence numbers increase, and that the stream opens with
// response.created and ends with response.completed carrying the same
// items and a usage.
func assemble(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var order []string
	var items []map[string]any
	partial := map[float64]*strings.Builder{}
	var completed map[string]any
	sc := bufio.NewScanner(resp.Body)
	var name string
	wantSeq := 0.0
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
		if ev["sequence_number"] != wantSeq {
			t.Fatalf("event %s: sequence_number %v, want %v", name, ev["sequence_number"], wantSeq)
		}
		wantSeq++
		order = append(order, name)
		idx, _ := ev["output_index"].(float64)
		switch name {
		case "response.output_item.added":
			partial[idx] = &strings.Builder{}
			if st := ev["item"].(map[string]any)["status"]; st != "in_progress" {
				t.Errorf("added item status %v", st)
			}
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			partial[idx].WriteString(ev["delta"].(string))
		case "response.output_item.done":
			item := ev["item"].(map[string]any)
			var whole string
			switch item["type"] {
			case "message":
				whole = item["content"].([]any)[0].(map[string]any)["text"].(string)
			case KindFunction:
				whole = item["arguments"].(string)
			case KindCustom:
				whole = item["input"].(string)
			}
			if got := partial[idx].String(); got != whole {
				t.Errorf("item %v: deltas give %q, the done item %q", idx, got, whole)
			}
			items = append(items, item)
		case "response.completed":
			completed = ev["response"].(map[string]any)
		}
	}
	if len(order) < 2 || order[0] != "response.created" || order[len(order)-1] != "response.completed" {
		t.Fatalf("event order %v", order)
	}
	if completed["usage"] == nil || completed["id"] == "" {
		t.Errorf("response.completed lacks id or usage: %v", completed)
	}
	var out []map[string]any
	for _, it := range completed["output"].([]any) {
		out = append(out, it.(map[string]any))
	}
	if !reflect.DeepEqual(out, items) {
		t.Errorf("response.completed output %v differs from the done items %v", out, items)
	}
	return items
}

// strip keeps the fields a test compares (ids are generated).
func strip(items []map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		c := map[string]any{}
		for k, v := range it {
			if k != "id" && k != "status" {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	return out
}

func text(s string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": s, "annotations": []any{}}}}
}

func TestScriptedTurns(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+héllo\n*** End Patch\n"
	s := New(
		Turn{Name: "first", When: Prompt("hello"), Reply: Reply{Text: "calling", Calls: []Call{
			Function("call_1", "exec_command", map[string]any{"cmd": "ls > out.txt"}),
			Custom("call_2", "apply_patch", patch),
		}}},
		Turn{Name: "second", When: After("call_1"), Reply: Reply{Calls: []Call{ToolSearch("call_3", "nexus tools"), NamespacedFunction("call_4", "mcp__nexus__", "nx_plan_status", nil)}}},
		Turn{Name: "agent", When: DeveloperHas("You are the architect"), Reply: Reply{Text: "architect here"}, Repeat: true},
		Turn{Name: "computed", When: Prompt("echo"), Do: func(r *ResponsesRequest) Reply {
			return Reply{Text: "tools: " + strings.Join(r.ToolNames(), ",")}
		}},
		Turn{Name: "never", When: Prompt("not sent")},
	)
	defer s.Close()
	url := s.BaseURL() + "/responses"
	const dev = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"hook context"}]}`
	tests := []struct {
		name      string
		body      string
		wantTurn  string
		wantItems []map[string]any
	}{
		{"prompt followed by a developer message", `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"say hello"}]},` + dev + `]}`,
			"first", []map[string]any{
				text("calling"),
				{"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": `{"cmd":"ls > out.txt"}`},
				{"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": patch},
			}},
		{"used once only", `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":"hello again"}]}`,
			"", []map[string]any{text(DefaultText)}},
		{"call output after hook context", `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":"hello"},{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{}"},` + dev + `,{"type":"function_call_output","call_id":"call_1","output":"done"}]}`,
			"second", []map[string]any{
				{"type": "tool_search_call", "call_id": "call_3", "execution": "client", "arguments": map[string]any{"query": "nexus tools"}},
				{"type": "function_call", "call_id": "call_4", "namespace": "mcp__nexus__", "name": "nx_plan_status", "arguments": `{}`},
			}},
		{"developer instructions, repeating", `{"model":"m","stream":true,"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are the architect."}]},{"type":"message","role":"user","content":"design"}]}`,
			"agent", []map[string]any{text("architect here")}},
		{"repeats", `{"model":"m","stream":true,"instructions":"You are the architect.","input":[{"type":"message","role":"user","content":"again"}]}`,
			"agent", []map[string]any{text("architect here")}},
		{"computed from the request", `{"model":"m","stream":true,"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__nexus__","tools":[{"type":"function","name":"nx_plan_status"}]},{"type":"tool_search","execution":"client"}],"input":[{"type":"message","role":"user","content":"echo"}]}`,
			"computed", []map[string]any{text("tools: exec_command,mcp__nexus__/nx_plan_status,tool_search")}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := strip(assemble(t, post(t, url, tc.body)))
			if !reflect.DeepEqual(items, tc.wantItems) {
				t.Errorf("items\n got %v\nwant %v", items, tc.wantItems)
			}
			reqs := s.Responses()
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
	if out, ok := req.Responses.Output("call_1"); !ok || out.Output.Text() != "done\n" {
		t.Errorf("Output(call_1) = %+v, %v", out, ok)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := New()
	defer s.Close()
	// A request without stream gets one JSON response.
	resp := post(t, s.BaseURL()+"/responses", `{"model":"m","input":[{"type":"message","role":"user","content":"hi"}]}`)
	var r struct {
		Object string           `json:"object"`
		Status string           `json:"status"`
		Output []map[string]any `json:"output"`
		Usage  map[string]any   `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Object != "response" || r.Status != "completed" || r.Usage == nil || !reflect.DeepEqual(strip(r.Output), []map[string]any{text(DefaultText)}) {
		t.Errorf("non-streaming: %+v %v", r, err)
	}
	if resp := post(t, s.BaseURL()+"/responses", `not json`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
	models, err := http.Get(s.BaseURL() + "/models")
	if err != nil || models.StatusCode != http.StatusOK {
		t.Fatalf("models: %v %v", models, err)
	}
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(models.Body).Decode(&list); err != nil || len(list.Data) == 0 {
		t.Errorf("models list %+v %v", list, err)
	}
	models.Body.Close()
	unknown, err := http.Get(s.URL + "/v1/elsewhere")
	if err != nil || unknown.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %v %v", unknown, err)
	}
	unknown.Body.Close()
	// Everything is recorded, the bad body too; only parsed Responses
	// calls count as responses.
	if n, m := len(s.Requests()), len(s.Responses()); n != 4 || m != 1 {
		t.Errorf("recorded %d requests, %d responses; want 4, 1", n, m)
	}
}

// TestConcurrentRequests: subagents ask in parallel; each request gets
// exactly one turn and a unique sequence number.
func TestConcurrentRequests(t *testing.T) {
	const n = 16
	var turns []Turn
	for i := range n {
		turns = append(turns, Turn{Name: fmt.Sprint(i), When: Prompt("go"), Reply: Reply{Text: fmt.Sprint(i)}})
	}
	s := New(turns...)
	defer s.Close()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(s.BaseURL()+"/responses", "application/json", strings.NewReader(`{"stream":true,"input":[{"type":"message","role":"user","content":"go"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, r := range s.Responses() {
		if r.Seq != i+1 || r.Turn == "" || seen[r.Turn] {
			t.Errorf("request %d: seq %d turn %q (seen %v)", i, r.Seq, r.Turn, seen[r.Turn])
		}
		seen[r.Turn] = true
	}
	if u := s.Unused(); len(u) != 0 {
		t.Errorf("Unused() = %v", u)
	}
}

func TestDump(t *testing.T) {
	s := New()
	defer s.Close()
	post(t, s.BaseURL()+"/responses", `{"stream":true,"input":[]}`)
	post(t, s.BaseURL()+"/responses", `not json`)
	path := t.TempDir() + "/dump.jsonl"
	if err := s.Dump(path); err != nil {
		t.Fatal(err)
	}
	f, err := readLines(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 2 || !strings.Contains(f[0], `"body":{"stream":true`) || !strings.Contains(f[1], `"body":"not json"`) {
		t.Errorf("dump:\n%s", strings.Join(f, "\n"))
	}
}
