package fakeresponses

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// The shapes below are those Codex 0.169.0 sends (docs/codex-notes.md):
// hook context as developer messages between a call and its output, the
// output as a string, a tool_search_call's arguments as an object.
const (
	user      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"please run it"}]}`
	developer = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"PRE-CONTEXT"}]}`
	call1     = `{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`
	out1      = `{"type":"function_call_output","call_id":"c1","output":"listing"}`
	call2     = `{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"}`
	out2      = `{"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"patched"}]}`
	search    = `{"type":"tool_search_call","call_id":"s1","execution":"client","arguments":{"query":"nexus"}}`
	found     = `{"type":"tool_search_output","call_id":"s1","execution":"client","status":"completed","tools":[{"type":"namespace","name":"mcp__nexus__","tools":[{"type":"function","name":"nx_task_add"}]}]}`
	compact   = `{"type":"message","role":"user","content":[{"type":"input_text","text":"You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary."}]}`
	answer    = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`
)

func body(items ...string) string {
	return `{"model":"gpt-5.5","input":[` + strings.Join(items, ",") + `]}`
}

func TestMatchers(t *testing.T) {
	tests := []struct {
		name string
		m    Matcher
		body string
		want bool
	}{
		{"prompt", Prompt("run it"), body(user), true},
		{"prompt then hook context", Prompt("run it"), body(user, developer), true},
		{"prompt, other text", Prompt("other"), body(user), false},
		{"prompt answered by a call output", Prompt("run it"), body(user, call1, out1), false},
		{"prompt after the assistant", Prompt("run it"), body(user, answer), false},
		{"after: output last", After("c1"), body(user, call1, out1), true},
		{"after: hook context between call and output", After("c1"), body(user, call1, developer, developer, out1), true},
		{"after: parallel outputs", After("c1"), body(user, call1, call2, out1, out2), true},
		{"after: the model acted since", After("c1"), body(user, call1, out1, call2, out2), false},
		{"after: the model answered since", After("c1"), body(user, call1, out1, answer), false},
		{"after: no output", After("c1"), body(user, call1), false},
		{"after: custom tool output", After("c2"), body(user, call2, out2), true},
		{"after: tool search output", After("s1"), body(user, search, found), true},
		{"compaction", Compaction(), body(user, call1, out1, compact), true},
		{"compaction: a prompt", Compaction(), body(user), false},
		{"compaction: After matches it too", After("c1"), body(user, call1, out1, compact), true},
		{"developer has", DeveloperHas("PRE-CONTEXT"), body(user, developer), true},
		{"developer has: user text does not count", DeveloperHas("run it"), body(user), false},
		{"any text: call output", AnyText("listing"), body(user, call1, out1), true},
		{"any text: content items", AnyText("patched"), body(user, call2, out2), true},
		{"any text: patch input", AnyText("Begin Patch"), body(user, call2), true},
		{"offers", Offers("mcp__nexus__/nx_task_add"), `{"tools":[{"type":"namespace","name":"mcp__nexus__","tools":[{"type":"function","name":"nx_task_add"}]}]}`, true},
		{"offers a built-in by type", Offers("tool_search"), `{"tools":[{"type":"tool_search","execution":"client"}]}`, true},
		{"offers nothing", Offers("exec_command"), `{}`, false},
		{"all", All(Prompt("run it"), DeveloperHas("PRE")), body(user, developer), true},
		{"all, one fails", All(Prompt("run it"), DeveloperHas("nope")), body(user, developer), false},
		{"not", Not(Prompt("run it")), body(user), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r ResponsesRequest
			if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
				t.Fatal(err)
			}
			if got := tc.m(&r); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body(developer, user, call1, out1, search, found)), &r); err != nil {
		t.Fatal(err)
	}
	if got := r.DeveloperText(); got != "PRE-CONTEXT\n" {
		t.Errorf("DeveloperText = %q", got)
	}
	if got := r.UserTexts(); len(got) != 1 || got[0] != "please run it\n" {
		t.Errorf("UserTexts = %q", got)
	}
	if got := r.Input[2].ArgumentsText(); got != `{"cmd":"ls"}` {
		t.Errorf("function call ArgumentsText = %q", got)
	}
	if got := r.Input[4].ArgumentsText(); got != `{"query":"nexus"}` {
		t.Errorf("tool search ArgumentsText = %q", got)
	}
	if out, ok := r.Output("s1"); !ok || toolNames(out.Tools)[0] != "mcp__nexus__/nx_task_add" {
		t.Errorf("Output(s1) = %+v, %v", out, ok)
	}
	if _, ok := r.Output("c9"); ok {
		t.Error("Output(c9) found")
	}
	var tools ResponsesRequest
	json.Unmarshal([]byte(`{"tools":[{"type":"custom","name":"apply_patch","format":{"type":"grammar"}},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f","description":"d"}]}]}`), &tools)
	if tl, ok := tools.Tool("ns/f"); !ok || tl.Description != "d" {
		t.Errorf("Tool(ns/f) = %+v, %v", tl, ok)
	}
	if tl, ok := tools.Tool("apply_patch"); !ok || tl.Type != "custom" {
		t.Errorf("Tool(apply_patch) = %+v, %v", tl, ok)
	}
}

func TestContentForms(t *testing.T) {
	tests := []struct {
		name, body string
		want       string
		wantErr    bool
	}{
		{"string", `"hi"`, "hi\n", false},
		{"parts", `[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:"},{"type":"output_text","text":"b"}]`, "a\nb\n", false},
		{"wrong type", `3`, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Content
			err := json.Unmarshal([]byte(tc.body), &c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := c.Text(); got != tc.want {
				t.Errorf("Text = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzResponsesRequest: any body either fails to decode or gives a request
// whose accessors and matchers work.
func FuzzResponsesRequest(f *testing.F) {
	f.Add(body(developer, user, call1, out1))
	f.Add(body(user, call2, developer, out2, search, found, answer))
	f.Add(`{"instructions":"I","tools":[{"type":"namespace","name":"n","tools":[{"name":"t"}]}],"input":[{"type":"message","role":"user","content":"x"}]}`)
	f.Fuzz(func(t *testing.T, b string) {
		var r ResponsesRequest
		if json.Unmarshal([]byte(b), &r) != nil {
			return
		}
		if !strings.Contains(r.AllText(), r.Instructions) || !strings.HasPrefix(r.DeveloperText(), r.Instructions) {
			t.Fatalf("the instructions are missing from AllText or DeveloperText")
		}
		r.UserTexts()
		r.ToolNames()
		r.Output("c1")
		r.Tool("n/t")
		Prompt("x")(&r)
		After("c1")(&r)
		DeveloperHas("I")(&r)
		Offers("n/t")(&r)
	})
}
