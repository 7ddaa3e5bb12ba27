package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	coreOnce sync.Once
	core     *vocabulary.Core
	schemas  *schema.Set
)

func newEngine(t testing.TB) (*harness.Engine, string) {
	t.Helper()
	coreOnce.Do(func() {
		c, err := vocabulary.LoadManifest(testenv.CoreDir(t))
		if err != nil {
			t.Fatal(err)
		}
		core, schemas = c, schema.NewCoreSet(c.Dir)
	})
	proj := t.TempDir()
	e, err := harness.New(harness.Options{Project: proj, Core: core, Schemas: schemas, Branch: func() string { return "main" }})
	if err != nil {
		t.Fatal(err)
	}
	return e, proj
}

func newServer(t testing.TB, e Engine, prefix string) *server.MCPServer {
	t.Helper()
	s, err := New(e, Options{Prefix: prefix, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func inProcess(t testing.TB, s *server.MCPServer) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func callTool(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error %v (tool failures must be isError results)", name, err)
	}
	return res
}

func resultText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content has %d parts, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestCallResults(t *testing.T) {
	e, _ := newEngine(t)
	e.Register(&tools.Tool{Name: "explode", Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) {
		return nil, errors.New("disk on fire")
	})})
	e.Register(&tools.Tool{Name: "panics", Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) {
		panic("bug")
	})})
	c := inProcess(t, newServer(t, e, "nx_"))
	cases := []struct {
		name    string
		tool    string
		args    any
		isError bool
		text    string // exact text content
		has     string // substring of the text content
	}{
		{name: "no plan", tool: "nx_plan_status", args: map[string]any{}, text: `{"active":false}`},
		{name: "nil arguments", tool: "nx_task_list", text: `{"exists":false}`},
		{name: "start", tool: "nx_plan_start", args: map[string]any{"topic": "<t&>", "issues": []any{"a", "b"}, "research_summary": "r"},
			text: `{"created":true,"issueCount":2,"plan_id":1,"previousArchived":false,"topic":"<t&>"}`},
		{name: "domain error is the envelope", tool: "nx_plan_decide", args: map[string]any{"issue_id": 9, "decision": "d"},
			isError: true, text: `{"error":"Issue 9 not found"}`},
		{name: "exact contract text", tool: "nx_task_update", args: map[string]any{"id": 1, "status": "completed"},
			isError: true, text: `{"error":"tasks.json not found"}`},
		{name: "validation error names the parameter", tool: "nx_plan_start", args: map[string]any{"topic": "t", "issues": []any{"a"}},
			isError: true, text: `{"error":"missing required parameter \"research_summary\""}`},
		{name: "number as string", tool: "nx_plan_decide", args: map[string]any{"issue_id": "2", "summary": "alias"}, has: `"decided":true`},
		{name: "arguments not an object", tool: "nx_task_list", args: []any{1}, isError: true, has: "must be a JSON object"},
		{name: "internal error", tool: "nx_explode", args: map[string]any{}, isError: true, text: `{"error":"nx_explode failed: disk on fire"}`},
		{name: "panic", tool: "nx_panics", args: map[string]any{}, isError: true, has: "tool panics failed unexpectedly: bug"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, c, tc.tool, tc.args)
			text := resultText(t, res)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v (%s)", res.IsError, tc.isError, text)
			}
			if tc.text != "" && text != tc.text {
				t.Fatalf("text = %s\nwant   %s", text, tc.text)
			}
			if !strings.Contains(text, tc.has) {
				t.Fatalf("text = %s, want it to contain %s", text, tc.has)
			}
			// The structured content carries the same object as the text.
			var fromText any
			if err := json.Unmarshal([]byte(text), &fromText); err != nil {
				t.Fatalf("text is not JSON: %v", err)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			tx, _ := json.Marshal(fromText)
			if !bytes.Equal(sc, tx) {
				t.Fatalf("structuredContent %s differs from text %s", sc, tx)
			}
		})
	}
	// The server survived the panic and still answers.
	if res := callTool(t, c, "nx_plan_status", nil); res.IsError {
		t.Fatal("server unusable after a panicking tool")
	}
}

func TestUnknownToolIsProtocolError(t *testing.T) {
	e, _ := newEngine(t)
	c := inProcess(t, newServer(t, e, "nx_"))
	req := mcp.CallToolRequest{}
	req.Params.Name = "plan_status" // the unprefixed name is not served
	if _, err := c.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want tool not found", err)
	}
}

func TestPrefixes(t *testing.T) {
	e, _ := newEngine(t)
	for _, prefix := range []string{"", "nexus-", "nx_"} {
		c := inProcess(t, newServer(t, e, prefix))
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 11 {
			t.Fatalf("prefix %q: %d tools, want 11", prefix, len(res.Tools))
		}
		for _, tool := range res.Tools {
			if !strings.HasPrefix(tool.Name, prefix) {
				t.Errorf("prefix %q: tool %s", prefix, tool.Name)
			}
		}
		if r := callTool(t, c, prefix+"context", nil); r.IsError {
			t.Errorf("prefix %q: %s", prefix, resultText(t, r))
		}
	}
	if _, err := New(e, Options{Prefix: "bad prefix!"}); err == nil {
		t.Fatal("a prefix with spaces was accepted")
	}
}

func TestRegisteredToolsAreServed(t *testing.T) {
	e, _ := newEngine(t)
	e.Register(&tools.Tool{
		Name: "memory_save", Description: "Save a memory.",
		Params:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
		Annotations: tools.Annotations{Idempotent: true},
		Handle: tools.Object(func(_ context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
			return map[string]any{"saved": args["name"]}, nil
		}),
	})
	e.Register(&tools.Tool{Name: "bad name!", Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) { return nil, nil })})
	c := inProcess(t, newServer(t, e, "nx_"))
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 12 {
		t.Fatalf("%d tools, want 11 + memory_save (the badly named one skipped)", len(res.Tools))
	}
	if r := callTool(t, c, "nx_memory_save", map[string]any{}); !r.IsError || !strings.Contains(resultText(t, r), `missing required parameter \"name\"`) {
		t.Fatalf("plugin tool parameters not validated: %s", resultText(t, r))
	}
	if r := callTool(t, c, "nx_memory_save", map[string]any{"name": "x"}); r.IsError || resultText(t, r) != `{"saved":"x"}` {
		t.Fatalf("plugin tool call: %s", resultText(t, r))
	}
}

// TestToolsListGolden snapshots the tools/list answer exactly as it goes
// over the wire: names, descriptions, schemas and all four hints of every
// tool. Run with -update to rewrite it.
func TestToolsListGolden(t *testing.T) {
	e, _ := newEngine(t)
	s := newServer(t, e, "nx_")
	resp := s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire.Result.Tools) != 11 {
		t.Fatalf("%d tools listed, want 11: %s", len(wire.Result.Tools), raw)
	}
	for _, tool := range wire.Result.Tools {
		a, _ := tool["annotations"].(map[string]any)
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := a[hint].(bool); !ok {
				t.Errorf("%s: %s is not set", tool["name"], hint)
			}
		}
		if a["openWorldHint"] == true {
			t.Errorf("%s: openWorldHint true, but every nexus-core tool only touches .nexus files", tool["name"])
		}
		if a["readOnlyHint"] == true && a["destructiveHint"] == true {
			t.Errorf("%s: read-only and destructive", tool["name"])
		}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	got := buf.Bytes()
	golden := filepath.Join("testdata", "tools_list.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("tools/list differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestReadOnlyHintsMatchTheTools(t *testing.T) {
	readOnly := map[string]bool{"plan_status": true, "task_list": true, "history_search": true, "context": true}
	for _, tool := range tools.All() {
		if tool.Annotations.ReadOnly != readOnly[tool.Name] {
			t.Errorf("%s: readOnly = %v", tool.Name, tool.Annotations.ReadOnly)
		}
		if !tool.Annotations.ReadOnly && !tool.Annotations.Destructive {
			t.Errorf("%s: every writing nexus-core tool can overwrite or delete data", tool.Name)
		}
	}
}
