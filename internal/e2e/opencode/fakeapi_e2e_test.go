//go:build e2e

package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fc "github.com/nexus-harness/nexus/internal/fakechat"
)

// The nexus-core tools as OpenCode names an MCP server's tools:
// <server>_<tool>.
var nexusTools = []string{"nx_plan_start", "nx_plan_status", "nx_plan_update", "nx_plan_decide", "nx_task_add", "nx_task_list", "nx_task_update", "nx_artifact_write", "nx_context", "nx_history_search", "nx_task_close"}

// TestE2EOpenCodeFakeAPI: the real OpenCode runs a scripted session against
// the fake Chat Completions API with the probe plugin and nexus's MCP
// server: the model calls bash, an MCP tool and a bash call the plugin
// blocks; the test checks what the model was given and what each hook saw.
func TestE2EOpenCodeFakeAPI(t *testing.T) {
	t.Parallel()
	const prompt = "e2e: drive opencode"
	api := fc.New(
		fc.Turn{Name: "bash", When: fc.Prompt(prompt), Reply: fc.Reply{Text: "Writing a file.", Calls: []fc.Call{
			{ID: "call_bash", Name: "bash", Args: map[string]any{"command": "echo e2e-bash > bash.txt", "description": "Write a file"}}}}},
		fc.Turn{Name: "mcp", When: fc.After("call_bash"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_mcp", Name: "nexus_nx_task_add", Args: map[string]any{"title": "E2E task", "context": "added from OpenCode"}}}}},
		fc.Turn{Name: "blocked", When: fc.After("call_mcp"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_blocked", Name: "bash", Args: map[string]any{"command": "echo BLOCKME > blocked.txt", "description": "Refused"}}}}},
		fc.Turn{Name: "final", When: fc.After("call_blocked"), Reply: fc.Reply{Text: "All done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{plugins: []string{"probe.js"}})
	r := s.run(prompt)

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v\nstderr: %s", u, tail(r.stderr, 3000))
	}
	if got := r.text(); got != "Writing a file.All done." {
		t.Errorf("printed text %q", got)
	}
	// The title request is answered apart and used no turn.
	if n := len(api.Titles()); n != 1 {
		t.Errorf("%d title requests, want 1", n)
	}
	first, _ := api.Answered("bash")
	req := first.Chat
	if !req.Stream || req.Model != "fake-model" {
		t.Errorf("first request: stream %v, model %q", req.Stream, req.Model)
	}
	sys := req.SystemText()
	for _, want := range []string{"You are opencode", "PROBE-SYSTEM-ADDITION", "<mcp_instructions>", `<server name="nexus">`} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if got := req.FirstUserText(); got != prompt+"\nPROBE-SYNTHETIC-CONTEXT\n" {
		t.Errorf("first user message %q: the prompt and the plugin's synthetic part should both reach the model", got)
	}
	for _, tool := range []string{"bash", "read", "write", "edit", "glob", "grep", "task", "skill", "todowrite", "webfetch"} {
		if !req.HasTool(tool) {
			t.Errorf("tool %s not offered; offered: %v", tool, req.ToolNames())
		}
	}
	for _, tool := range nexusTools {
		if !req.HasTool("nexus_" + tool) {
			t.Errorf("MCP tool nexus_%s not offered; offered: %v", tool, req.ToolNames())
		}
	}
	if req.HasTool("apply_patch") {
		t.Error("apply_patch offered to a non-GPT model id")
	}

	// What each call did and what the model got back.
	if b, err := os.ReadFile(filepath.Join(s.proj, "bash.txt")); err != nil || string(b) != "e2e-bash\n" {
		t.Errorf("bash.txt: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.proj, ".nexus", "state", "tasks.json")); err != nil || !strings.Contains(string(b), "E2E task") {
		t.Errorf("the MCP call did not add the task: %q %v", b, err)
	}
	blocked, _ := api.Answered("final")
	if res, ok := blocked.Chat.ToolResult("call_blocked"); !ok || res.Content.Text() != "probe blocked bash: BLOCKME seen\n" {
		t.Errorf("the blocked call's result %q (%v): the thrown message should be all the model gets", res.Content.Text(), ok)
	}
	if _, err := os.Stat(filepath.Join(s.proj, "blocked.txt")); !os.IsNotExist(err) {
		t.Errorf("the blocked command ran: %v", err)
	}

	// What the plugin saw.
	calls := s.probeCalls()
	if calls[0].Hook != "init" || calls[len(calls)-1].Hook != "dispose" {
		t.Errorf("the probe log runs from %s to %s, want init to dispose", calls[0].Hook, calls[len(calls)-1].Hook)
	}
	var init struct {
		Keys      []string `json:"keys"`
		Directory string   `json:"directory"`
	}
	json.Unmarshal(calls[0].Input, &init)
	if init.Directory != s.proj || !slices.Contains(init.Keys, "client") || !slices.Contains(init.Keys, "$") {
		t.Errorf("plugin input %s", calls[0].Input)
	}
	var sessionID string
	var events []string
	var before, after []string
	for _, c := range calls {
		switch c.Hook {
		case "event":
			events = append(events, c.eventType())
			if c.eventType() == "session.created" {
				var in struct {
					Event struct {
						Properties struct {
							Info struct {
								ID       string  `json:"id"`
								ParentID *string `json:"parentID"`
							} `json:"info"`
						} `json:"properties"`
					} `json:"event"`
				}
				json.Unmarshal(c.Input, &in)
				sessionID = in.Event.Properties.Info.ID
				if in.Event.Properties.Info.ParentID != nil {
					t.Errorf("the root session has a parentID: %s", c.Input)
				}
			}
		case "chat.message":
			var out struct {
				Message struct {
					Agent string `json:"agent"`
				} `json:"message"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			}
			json.Unmarshal(c.Output, &out)
			if out.Message.Agent != "build" || len(out.Parts) != 1 || out.Parts[0].Text != prompt {
				t.Errorf("chat.message output %s", c.Output)
			}
		case "tool.execute.before", "tool.execute.after":
			var in struct {
				Tool      string          `json:"tool"`
				SessionID string          `json:"sessionID"`
				CallID    string          `json:"callID"`
				Args      json.RawMessage `json:"args"`
			}
			json.Unmarshal(c.Input, &in)
			if in.SessionID != sessionID {
				t.Errorf("%s in session %q, want %q", c.Hook, in.SessionID, sessionID)
			}
			if c.Hook == "tool.execute.before" {
				before = append(before, in.Tool+" "+in.CallID+" "+string(c.Output))
			} else {
				after = append(after, in.Tool+" "+in.CallID+" "+string(in.Args)+" "+string(c.Output))
			}
		}
	}
	for _, want := range []string{"session.created", "session.status", "message.updated", "message.part.updated", "session.idle"} {
		if !slices.Contains(events, want) {
			t.Errorf("no %s event; saw %v", want, events)
		}
	}
	wantBefore := []string{
		`bash call_bash {"args":{"command":"echo e2e-bash > bash.txt","description":"Write a file"}}`,
		`nexus_nx_task_add call_mcp {"args":{"context":"added from OpenCode","title":"E2E task"}}`,
		`bash call_blocked {"args":{"command":"echo BLOCKME > blocked.txt","description":"Refused"}}`,
	}
	if !slices.Equal(before, wantBefore) {
		t.Errorf("tool.execute.before calls:\n%s\nwant\n%s", strings.Join(before, "\n"), strings.Join(wantBefore, "\n"))
	}
	// No after for the blocked call; bash's output is OpenCode's ("(no
	// output)" for a silent command), the MCP tool's the raw MCP result.
	if len(after) != 2 || !strings.HasPrefix(after[0], `bash call_bash {"command":"echo e2e-bash > bash.txt","description":"Write a file"} {"title":"echo e2e-bash > bash.txt","metadata":{"output":"(no output)","exit":0`) ||
		!strings.HasPrefix(after[1], `nexus_nx_task_add call_mcp {"context":"added from OpenCode","title":"E2E task"} {"content":[{"type":"text","text":`) {
		t.Errorf("tool.execute.after calls:\n%s", strings.Join(after, "\n"))
	}
}
