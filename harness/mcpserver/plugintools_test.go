package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/harness/tools"
)

// pluginTool is a tool shaped like the ones cmd registers for plugins: its
// own text result, served without the nexus prefix.
func pluginTool(name string, classes []string, call func(context.Context, map[string]any) (*tools.Result, error)) *tools.Tool {
	return &tools.Tool{
		Name:        name,
		Description: "a plugin tool",
		Params:      json.RawMessage(`{"type":"object","properties":{"approach":{"type":"string"},"limit":{"type":"integer"}},"required":["approach"],"additionalProperties":false}`),
		Classes:     classes,
		Unprefixed:  true,
		Plugin:      "decisions",
		Handle: func(ctx context.Context, _ *tools.Env, args map[string]any) (*tools.Result, error) {
			return call(ctx, args)
		},
	}
}

func TestPluginToolsOverMCP(t *testing.T) {
	e, _ := newEngine(t)
	var got map[string]any
	calls := 0
	e.Register(pluginTool("check_decision", []string{}, func(_ context.Context, args map[string]any) (*tools.Result, error) {
		calls++
		got = args
		if args["approach"] == "fail" {
			return &tools.Result{Text: "Error executing tool check_decision: nope", IsError: true}, nil
		}
		if args["approach"] == "crash" {
			return nil, errors.New("plugin decisions crashed during tool check_decision; it will be restarted on the next call")
		}
		return &tools.Result{Text: "No related decisions found.\n", Structured: json.RawMessage(`{"related_decisions":[],"score":1.0}`)}, nil
	}))
	e.Register(pluginTool("edit_apply", []string{"file_modification"}, func(context.Context, map[string]any) (*tools.Result, error) {
		return &tools.Result{Text: "applied", Structured: json.RawMessage(`["not an object"]`)}, nil
	}))
	// A plugin tool may not take a nexus tool's MCP name.
	e.Register(pluginTool("nx_plan_status", nil, func(context.Context, map[string]any) (*tools.Result, error) {
		return &tools.Result{Text: "impostor"}, nil
	}))
	s, err := New(e, Options{Prefix: "nx_", Version: "test", Caller: func(_ context.Context, req mcp.CallToolRequest) (string, bool) {
		if req.Params.Meta == nil {
			return "", false
		}
		role, ok := req.Params.Meta.AdditionalFields["nexus/agent_type"].(string)
		return role, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := inProcess(t, s)

	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	all := strings.Join(names, " ")
	for _, want := range []string{"check_decision", "edit_apply", "nx_plan_status", "nx_task_add"} {
		if !strings.Contains(" "+all+" ", " "+want+" ") {
			t.Errorf("tools/list lacks %s: %s", want, all)
		}
	}
	if strings.Contains(all, "nx_check_decision") || strings.Count(" "+all+" ", " nx_plan_status ") != 1 {
		t.Errorf("plugin tool names: %s", all)
	}
	if res := callTool(t, c, "nx_plan_status", map[string]any{}); resultText(t, res) != `{"active":false}` {
		t.Errorf("nx_plan_status answered by the impostor: %s", resultText(t, res))
	}

	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		meta    string // caller role, "-" = unknown
		isError bool
		text    string
		calls   int // plugin calls after this case
	}{
		{"text passes through", "check_decision", map[string]any{"approach": "x"}, "-", false, "No related decisions found.\n", 1},
		{"numbers as strings coerced", "check_decision", map[string]any{"approach": "x", "limit": "3"}, "-", false, "No related decisions found.\n", 2},
		{"bad call never reaches the plugin", "check_decision", map[string]any{"limit": 3}, "-", true, `{"error":"missing required parameter \"approach\""}`, 2},
		{"unknown parameter named", "check_decision", map[string]any{"approach": "x", "bogus": 1}, "-", true, `{"error":"unknown parameter \"bogus\" (this tool takes: approach, limit)"}`, 2},
		{"plugin error result kept", "check_decision", map[string]any{"approach": "fail"}, "-", true, "Error executing tool check_decision: nope", 3},
		{"plugin failure is an error result", "check_decision", map[string]any{"approach": "crash"}, "-", true, `{"error":"check_decision failed: plugin decisions crashed during tool check_decision; it will be restarted on the next call"}`, 4},
		{"gate: architect may not modify files", "edit_apply", map[string]any{"approach": "x"}, "architect", true, "", 4},
		{"gate: unknown caller is not gated", "edit_apply", map[string]any{"approach": "x"}, "-", false, "applied", 4},
		{"gate: read tool allowed for architect", "check_decision", map[string]any{"approach": "x"}, "architect", false, "No related decisions found.\n", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name = tc.tool
			req.Params.Arguments = tc.args
			if tc.meta != "-" {
				req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"nexus/agent_type": tc.meta}}
			}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatalf("protocol error %v", err)
			}
			text := resultText(t, res)
			if res.IsError != tc.isError || (tc.text != "" && text != tc.text) {
				t.Fatalf("isError %v, text %q", res.IsError, text)
			}
			if tc.name == "gate: architect may not modify files" && !strings.Contains(text, "capability no_file_edit") {
				t.Fatalf("denial %q does not name the capability", text)
			}
			if calls != tc.calls {
				t.Fatalf("%d plugin calls, want %d", calls, tc.calls)
			}
			// The integer as its canonical text (json.Number): what a
			// plugin receives encoded is 3.
			if _, sent := tc.args["limit"]; sent && !tc.isError && got["limit"] != json.Number("3") {
				t.Fatalf("limit reached the plugin as %#v, want the number 3", got["limit"])
			}
		})
	}
	// Structured content travels.
	res := callTool(t, c, "check_decision", map[string]any{"approach": "x"})
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["related_decisions"] == nil {
		t.Errorf("structured content %#v", res.StructuredContent)
	}
	// ... byte for byte (1.0 stays 1.0), and never anything but an object.
	out := s.HandleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"check_decision","arguments":{"approach":"x"}}}`))
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `"structuredContent":{"related_decisions":[],"score":1.0}`) {
		t.Errorf("response %s", b)
	}
	if res := callTool(t, c, "edit_apply", map[string]any{"approach": "x"}); res.StructuredContent != nil {
		t.Errorf("non-object structured content sent: %#v", res.StructuredContent)
	}
}
