// Package mcpserver serves the engine's tools over MCP (mark3labs/mcp-go):
// names get the configured prefix (nx_plan_start), every tool advertises its
// own self-contained parameter schema and all four behaviour hints, and
// every failure reaches the client as an isError result carrying the
// nexus-core error envelope {"error": "<message>"}, never as a crash or a
// protocol error. Validation and business rules stay in the engine; this
// package only translates.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-harness/nexus/harness/tools"
)

// DefaultPrefix is prepended to the abstract tool names unless configured
// otherwise (mcp.tool_prefix): nexus-core's prompt bodies call nx_plan_start.
const DefaultPrefix = "nx_"

// Engine is what the server needs from harness.Engine: its tools, and the
// one path that calls them (argument checks, the gate, the tool's
// handler).
type Engine interface {
	Tools() []*tools.Tool
	Call(ctx context.Context, name string, args map[string]any) (*tools.Result, error)
}

// argsDecoder is implemented by engines that decode a tool call's
// arguments from the text the client sent (harness.Engine.DecodeArgs:
// limits and the unknown-parameter rule checked on the text, numbers kept
// exact).
type argsDecoder interface {
	DecodeArgs(name string, raw []byte) (map[string]any, error)
}

// Options configure the server.
type Options struct {
	// Prefix is prepended to every tool name ("" keeps the abstract names).
	Prefix string
	// Version is reported in serverInfo.
	Version string
	// Log receives internal failures (nil = discard). Never stdout: on stdio
	// stdout carries the protocol.
	Log *log.Logger
	// Caller, when set, says which agent makes a tool call (role "" is
	// Lead); a known caller's calls go through the capability gate. nil or
	// known false: the caller is unknown and only the hooks gate.
	Caller func(ctx context.Context, req mcp.CallToolRequest) (role string, known bool)
	// Name and Instructions replace the server's name ("nexus") and its
	// instructions (a server that serves one plugin's tools only).
	Name, Instructions string
}

// validName applies the tool-name rule of the MCP specification,
// ^[A-Za-z0-9_.-]{1,128}$. Checked by hand: the bounded repetition makes the
// equivalent regexp cost over half a millisecond to compile at start-up.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// instructions tell the model what the tools are for.
const instructions = "nexus keeps this project's plan, tasks and history under .nexus/. " +
	"Plan with plan_start/plan_update/plan_decide, run the work with task_add/task_update/task_list, " +
	"close the cycle with task_close, search past cycles with history_search, and save deliverables with artifact_write."

// New builds an MCP server exposing every tool the engine has now.
// Tools registered later are not seen: register memory and plugin tools
// before calling New.
func New(e Engine, o Options) (*server.MCPServer, error) {
	if o.Prefix != "" && !validName(o.Prefix) {
		return nil, fmt.Errorf("tool prefix %q may only contain letters, digits, '_', '-' and '.'", o.Prefix)
	}
	if o.Log == nil {
		o.Log = log.New(io.Discard, "", 0)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Name == "" {
		o.Name = "nexus"
	}
	if o.Instructions == "" {
		o.Instructions = instructions
	}
	s := server.NewMCPServer(o.Name, o.Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(o.Instructions),
	)
	var list []server.ServerTool
	served := map[string]bool{}
	// nexus's own tools first: a plugin tool never takes one's name.
	for _, own := range []bool{true, false} {
		for _, t := range e.Tools() {
			if t.Unprefixed == own {
				continue
			}
			name := o.Prefix + t.Name
			if t.Unprefixed {
				name = t.Name
			}
			switch {
			case !validName(name):
				o.Log.Printf("mcp: tool %q not served: its name does not follow the MCP naming rule", name)
				continue
			case served[name]:
				o.Log.Printf("mcp: tool %q not served: another tool already has that name", name)
				continue
			}
			served[name] = true
			list = append(list, server.ServerTool{Tool: describe(name, t), Handler: handler(e, t, name, o)})
		}
	}
	s.AddTools(list...)
	return s, nil
}

// describe turns a tool into its MCP description. NewToolWithRawSchema is
// the one constructor that does not also fill the structured schema (which
// would make tools/list fail for the whole server).
func describe(name string, t *tools.Tool) mcp.Tool {
	params := t.Params
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	mt := mcp.NewToolWithRawSchema(name, t.Description, compact(params))
	a := t.Annotations
	mt.Title = a.Title
	mt.Annotations = mcp.ToolAnnotation{
		Title:           a.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(a.ReadOnly),
		DestructiveHint: mcp.ToBoolPtr(a.Destructive),
		IdempotentHint:  mcp.ToBoolPtr(a.Idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(a.OpenWorld),
	}
	return mt
}

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

func handler(e Engine, t *tools.Tool, name string, o Options) server.ToolHandlerFunc {
	abstract, logger := t.Name, o.Log
	failed := func(err error) *mcp.CallToolResult {
		var te *tools.Error
		if errors.As(err, &te) {
			return errorResult(te.Message)
		}
		// Not the caller's mistake: a corrupt state file, a disk error, a
		// plugin that crashed or timed out, a bug. The model still gets a
		// readable error.
		logger.Printf("mcp: %s failed: %v", name, err)
		return errorResult(fmt.Sprintf("%s failed: %v", name, err))
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if raw, ok := argsFrom(ctx); ok {
			// The edge kept the arguments as sent; the library saw {}.
			if raw.present && !bytes.Equal(bytes.TrimSpace(raw.raw), []byte("null")) {
				if raw.raw[0] != '{' {
					return errorResult(fmt.Sprintf("the arguments of %s must be a JSON object", name)), nil
				}
				var err error
				if args, err = decodeArgs(e, abstract, raw.raw); err != nil {
					return failed(err), nil
				}
			}
		} else {
			switch a := req.Params.Arguments.(type) {
			case nil:
			case map[string]any:
				args = a
			default:
				return errorResult(fmt.Sprintf("the arguments of %s must be a JSON object", name)), nil
			}
		}
		if o.Caller != nil {
			if role, known := o.Caller(ctx, req); known {
				ctx = tools.WithCaller(ctx, role)
			}
		}
		r, err := e.Call(ctx, abstract, args)
		if err != nil {
			return failed(err), nil
		}
		if r.JSON && !r.IsError {
			// nexus's own answer, encoded once: the text aliases the
			// bytes, which nothing modifies, so a large answer is not
			// copied once more.
			return &mcp.CallToolResult{
				Content:              []mcp.Content{mcp.NewTextContent(unsafe.String(unsafe.SliceData(r.Structured), len(r.Structured)))},
				RawStructuredContent: r.Structured,
			}, nil
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(r.Text)}, IsError: r.IsError}
		// Structured content must be a JSON object (MCP); anything else a
		// plugin sends is dropped.
		if s := bytes.TrimSpace(r.Structured); len(s) > 0 && s[0] == '{' && json.Valid(s) {
			out.RawStructuredContent = s
		}
		return out, nil
	}
}

// decodeArgs decodes arguments as sent: through the engine's own rules
// when it has them, else keeping numbers as their text.
func decodeArgs(e Engine, tool string, raw []byte) (map[string]any, error) {
	if d, ok := e.(argsDecoder); ok {
		return d.DecodeArgs(tool, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, &tools.Error{Message: "the arguments are not a JSON object: " + err.Error()}
	}
	return args, nil
}

// errorResult is the nexus-core error envelope as an MCP tool error: the
// text is {"error": msg} and the structured content is the same object.
func errorResult(msg string) *mcp.CallToolResult {
	env := map[string]any{"error": msg}
	text, _ := encode(env)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: env,
		IsError:           true,
	}
}

// encode renders compact JSON without HTML escaping, as JSON.stringify does.
func encode(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
