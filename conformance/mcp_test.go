package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The test binary doubles as a fake MCP harness: started with
// CONFORMANCE_FAKE_MCP=1 it serves a few nx_ tools over stdio, so the MCP
// target is tested against a real subprocess and a real transport.
func TestMain(m *testing.M) {
	if os.Getenv("CONFORMANCE_FAKE_MCP") == "1" {
		if err := serveFakeMCP(); err != nil {
			fmt.Fprintln(os.Stderr, "fake mcp:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	switch os.Getenv("CONFORMANCE_FAKE_HOOK") {
	case "record":
		os.Exit(recordHook())
	case "fail":
		fmt.Fprintln(os.Stderr, "blocked: the fake hook refuses")
		os.Exit(2)
	}
	if os.Getenv("CONFORMANCE_FAKE_MCP") == "crash" {
		fmt.Fprintln(os.Stderr, "fake mcp: refusing to start")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func serveFakeMCP() error {
	s := server.NewMCPServer("fake", "1")
	schema := json.RawMessage(`{"type": "object"}`)
	add := func(name string, h server.ToolHandlerFunc) {
		s.AddTool(mcp.NewToolWithRawSchema("nx_"+name, name, schema), h)
	}
	add("structured", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"args": req.GetArguments(), "n": 1}, "ignored text"), nil
	})
	add("text", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"created": true, "plan_id": 3}`), nil
	})
	add("where", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]any{"root": os.Getenv("NEXUS_RUNTIME_ROOT"), "cwd": wd})
		return mcp.NewToolResultText(string(b)), nil
	})
	add("fail", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(`{"error": "No active plan session"}`), nil
	})
	add("fail_plain", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("Task id 99 not found"), nil
	})
	add("envelope", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"error": "Task id 99 not found"}`), nil
	})
	add("rpc_error", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("handler exploded")
	})
	add("not_json", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	add("bad_plan", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		dir := filepath.Join(os.Getenv("NEXUS_RUNTIME_ROOT"), "state")
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "plan.json"), []byte(`{"id": 0}`), 0o644)
		return mcp.NewToolResultText(`{}`), nil
	})
	return server.ServeStdio(s)
}

func fakeMCPFactory(t *testing.T, mode string) *MCPFactory {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &MCPFactory{Command: []string{exe}, Env: []string{"CONFORMANCE_FAKE_MCP=" + mode}}
}

func TestMCPTarget(t *testing.T) {
	f := fakeMCPFactory(t, "1")
	dir := t.TempDir()
	p := Project{Dir: dir, NexusDir: filepath.Join(dir, ".nexus"), HarnessID: "x"}
	ctx := context.Background()
	tg, err := f.NewTarget(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()

	res, err := tg.CallTool(ctx, "structured", map[string]any{"a": "b"})
	if err != nil || res["n"] != float64(1) || res["args"].(map[string]any)["a"] != "b" {
		t.Errorf("structured: %v, %v", res, err)
	}
	res, err = tg.CallTool(ctx, "text", nil)
	if err != nil || res["created"] != true || res["plan_id"] != float64(3) {
		t.Errorf("text: %v, %v", res, err)
	}
	res, err = tg.CallTool(ctx, "where", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res["root"] != p.NexusDir || res["cwd"] != dir {
		t.Errorf("server started with NEXUS_RUNTIME_ROOT=%v in %v, want %s in %s", res["root"], res["cwd"], p.NexusDir, dir)
	}

	// Every form of error is an error, its message the harness's own.
	for _, tc := range []struct{ tool, msg, form string }{
		{"fail", "No active plan session", ErrorIsError},
		{"fail_plain", "Task id 99 not found", ErrorIsError},
		{"envelope", "Task id 99 not found", ErrorEnvelope},
		{"rpc_error", "handler exploded", ErrorJSONRPC},
	} {
		_, err := tg.CallTool(ctx, tc.tool, nil)
		te := AsToolError(err)
		if te == nil || te.Message != tc.msg || te.Form != tc.form {
			t.Errorf("%s: error %#v, want a %s ToolError %q", tc.tool, err, tc.form, tc.msg)
		}
	}
	for _, tc := range []struct{ tool, want string }{
		{"not_json", "result text is not a JSON object"},
		{"missing", "does not list a tool named nx_missing"},
	} {
		_, err := tg.CallTool(ctx, tc.tool, nil)
		if err == nil || AsToolError(err) != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a target failure containing %q", tc.tool, err, tc.want)
		}
	}
	if err := tg.Event(ctx, EventAgentSpawn, nil); err == nil {
		t.Error("events must fail over MCP")
	}
}

func TestMCPTargetStartFailureShowsStderr(t *testing.T) {
	f := fakeMCPFactory(t, "crash")
	dir := t.TempDir()
	_, err := f.NewTarget(context.Background(), Project{Dir: dir, NexusDir: filepath.Join(dir, ".nexus")})
	if err == nil || !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("error %v, want one quoting the server's stderr", err)
	}
	missing := &MCPFactory{Command: []string{"no-such-harness-binary"}}
	if _, err := missing.NewTarget(context.Background(), Project{Dir: dir}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v for a missing command", err)
	}
}

func TestMCPRunner(t *testing.T) {
	f := fakeMCPFactory(t, "1")
	results := runFixturesWith(t, f,
		fixture("m_text", `"action": {"tool": "text", "params": {}}, "postcondition": {"return_value": {"$.created": true, "$.plan_id": {"type": "number", "min": 3, "max": 3}}}`),
		fixture("m_error", `"action": {"tool": "fail", "params": {}}, "postcondition": {"return_value": {"$.error": "No active plan session"}}`),
		fixture("m_schema", `"action": {"tool": "bad_plan", "params": {}}`),
		fixture("m_event", `"event": {"type": "agent_spawn", "params": {}}`),
		fixture("m_prefix", `"action": {"tool": "nx_text", "params": {}}`),
	)
	want := map[string]string{"m_text": "PASS", "m_error": "PASS", "m_schema": "FAIL", "m_event": "SKIP", "m_prefix": "FAIL"}
	for _, r := range results {
		if string(r.Status) != want[r.ID] {
			t.Errorf("%s: %s, want %s: %s", r.ID, r.Status, want[r.ID], failureText(r))
		}
	}
	if !strings.Contains(failureText(results[2]), "schema .nexus/state/plan.json") {
		t.Errorf("m_schema: %s", failureText(results[2]))
	}
	if !strings.Contains(failureText(results[4]), "nx_nx_text") {
		t.Errorf("m_prefix: %s", failureText(results[4]))
	}
}

func TestMCPPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"", "nx_"}, {NoPrefix, ""}, {"foo_", "foo_"}} {
		if got := (&MCPFactory{ToolPrefix: tc.in}).prefix(); got != tc.want {
			t.Errorf("prefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDecodeResult: the three ways a result can say "error" (§6.7), and
// results that only look like one.
func TestDecodeResult(t *testing.T) {
	text := func(s string) []mcp.Content { return []mcp.Content{mcp.NewTextContent(s)} }
	for _, tc := range []struct {
		name    string
		res     mcp.CallToolResult
		errMsg  string // "" = success
		form    string
		success string // a member the success value must have
	}{
		{"envelope as text", mcp.CallToolResult{Content: text(`{"error":"Task id 99 not found"}`)}, "Task id 99 not found", ErrorEnvelope, ""},
		{"envelope as structured content", mcp.CallToolResult{Content: text("x"), StructuredContent: map[string]any{"error": "No active plan session"}}, "No active plan session", ErrorEnvelope, ""},
		{"isError with an envelope", mcp.CallToolResult{IsError: true, Content: text(`{"error":"Unknown action: frobnicate"}`)}, "Unknown action: frobnicate", ErrorIsError, ""},
		{"isError with plain text", mcp.CallToolResult{IsError: true, Content: text("boom")}, "boom", ErrorIsError, ""},
		{"isError without text", mcp.CallToolResult{IsError: true}, "tool error without a message", ErrorIsError, ""},
		{"success", mcp.CallToolResult{Content: text(`{"created":true}`)}, "", "", "created"},
		{"error member that is not a string", mcp.CallToolResult{Content: text(`{"error":null,"ok":true}`)}, "", "", "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeResult("nx_x", &tc.res)
			if tc.errMsg == "" {
				if _, ok := v[tc.success]; err != nil || !ok {
					t.Fatalf("want success with %q, got %v, %v", tc.success, v, err)
				}
				return
			}
			te := AsToolError(err)
			if te == nil || te.Message != tc.errMsg || te.Form != tc.form {
				t.Fatalf("got %v, %#v; want a %s error %q", v, err, tc.form, tc.errMsg)
			}
		})
	}
}

// TestRPCMessage: a JSON-RPC error's message is the server's, without the
// client library's name for the code.
func TestRPCMessage(t *testing.T) {
	for _, tc := range []struct {
		code int
		msg  string
	}{
		{mcp.INVALID_PARAMS, "MCP error -32602: Input validation error: action must be one of add, remove"},
		{mcp.INTERNAL_ERROR, "Task id 99 not found"},
		{-32000, "Unknown action: frobnicate"},
	} {
		details := mcp.JSONRPCErrorDetails{Code: tc.code, Message: tc.msg}
		if got := rpcMessage(details.AsError()); got != tc.msg {
			t.Errorf("code %d: %q, want %q", tc.code, got, tc.msg)
		}
	}
}
