package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// DefaultToolPrefix is the prefix nexus-core's prompt bodies use for tool
// names (nx_plan_start).
const DefaultToolPrefix = "nx_"

// MCPFactory runs the suite against any harness that serves the nexus-core
// tools over MCP stdio: one server process per case, started in the scratch
// project with NEXUS_RUNTIME_ROOT pointing at its .nexus folder.
type MCPFactory struct {
	// Command is the server command line (program and arguments).
	Command []string
	// ToolPrefix is prepended to abstract tool names ("" = DefaultToolPrefix;
	// use NoPrefix for servers that register bare names).
	ToolPrefix string
	// Env is added to the server's environment (KEY=VALUE).
	Env []string

	once    sync.Once
	program string
	lookErr error
}

// NoPrefix, as MCPFactory.ToolPrefix, calls tools by their bare abstract
// names.
const NoPrefix = "-"

// EventsUnsupported: lifecycle events are hook calls, not MCP tools, so an
// external server cannot be driven through them.
func (f *MCPFactory) EventsUnsupported() string {
	return "lifecycle events are harness hooks, not MCP tools; pass the harness's hook command with --hook-target"
}

func (f *MCPFactory) prefix() string {
	switch f.ToolPrefix {
	case "":
		return DefaultToolPrefix
	case NoPrefix:
		return ""
	}
	return f.ToolPrefix
}

// resolve finds the program once: the server runs in the scratch project,
// so a relative path must be made absolute first.
func (f *MCPFactory) resolve() (string, error) {
	f.once.Do(func() { f.program, f.lookErr = resolveProgram(f.Command) })
	return f.program, f.lookErr
}

// resolveProgram makes a command's program absolute: a path as given
// (relative to the working directory), a bare name through PATH.
func resolveProgram(command []string) (string, error) {
	if len(command) == 0 {
		return "", errors.New("no target command")
	}
	name := command[0]
	if strings.ContainsRune(name, filepath.Separator) {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() {
			return "", fmt.Errorf("target command %s: not an executable file", abs)
		}
		return abs, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("target command %q not found: %w", name, err)
	}
	return p, nil
}

// Check starts the server once in scratch, runs the handshake and lists
// its tools: a command that is missing or does not speak MCP is one error.
func (f *MCPFactory) Check(ctx context.Context, scratch string) error {
	t, err := f.NewTarget(ctx, Project{Dir: scratch, NexusDir: filepath.Join(scratch, ".nexus")})
	if err != nil {
		return err
	}
	return t.Close()
}

// NewTarget starts the server, initialises the MCP session and lists its
// tools.
func (f *MCPFactory) NewTarget(ctx context.Context, p Project) (Target, error) {
	program, err := f.resolve()
	if err != nil {
		return nil, err
	}
	stderr := &tailBuffer{limit: 8 << 10}
	env := append([]string{"NEXUS_RUNTIME_ROOT=" + p.NexusDir}, f.Env...)
	tr := transport.NewStdioWithOptions(program, env, f.Command[1:],
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir = p.Dir
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = stderr
			return cmd, nil
		}))
	// The initialize handshake (2025-11-25 and older) is what every
	// published MCP server speaks; asking for it skips a discovery probe
	// that older servers would have to time out on.
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	t := &mcpTarget{c: c, prefix: f.prefix(), stderr: stderr}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(f.Command, " "), err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "nexus-conformance", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = t.Close()
		return nil, t.withStderr(fmt.Errorf("initialize: %w", err))
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		_ = t.Close()
		return nil, t.withStderr(fmt.Errorf("tools/list: %w", err))
	}
	t.tools = map[string]bool{}
	for _, tool := range tools.Tools {
		t.tools[tool.Name] = true
	}
	return t, nil
}

type mcpTarget struct {
	c      *client.Client
	prefix string
	tools  map[string]bool
	stderr *tailBuffer
}

func (t *mcpTarget) CallTool(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	name := t.prefix + tool
	if !t.tools[name] {
		return nil, fmt.Errorf("the server does not list a tool named %s (check --tool-prefix)", name)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = params
	res, err := t.c.CallTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil || isTransportError(err) {
			return nil, t.withStderr(fmt.Errorf("tools/call %s: %w", name, err))
		}
		// The server answered the call with a JSON-RPC error: an error as
		// far as the fixtures go (§6.7), with the server's own message.
		return nil, &ToolError{Message: rpcMessage(err), Form: ErrorJSONRPC}
	}
	return decodeResult(name, res)
}

func isTransportError(err error) bool {
	var te *transport.Error
	return errors.As(err, &te)
}

// rpcMessages are the errors mcp-go puts in front of a JSON-RPC error's
// message for the standard codes ("invalid params: <message>").
var rpcMessages = []error{mcp.ErrParseError, mcp.ErrInvalidRequest, mcp.ErrMethodNotFound, mcp.ErrInvalidParams,
	mcp.ErrInternalError, mcp.ErrRequestInterrupted, mcp.ErrResourceNotFound}

// rpcMessage returns the message the server put in a JSON-RPC error.
func rpcMessage(err error) string {
	msg := err.Error()
	for _, sentinel := range rpcMessages {
		if errors.Is(err, sentinel) {
			if rest, ok := strings.CutPrefix(msg, sentinel.Error()+": "); ok {
				return rest
			}
		}
	}
	return msg
}

// decodeResult reads a tool result: structuredContent when present, else
// the first text content parsed as a JSON object. Two forms of result are
// errors (nexus-core §6.7, as its own runners judge them): isError results,
// whose message is the envelope's "error" member or the text, and results
// that are the error envelope {"error": "<message>"} itself.
func decodeResult(name string, res *mcp.CallToolResult) (map[string]any, error) {
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			text.WriteString(tc.Text)
		}
	}
	var obj map[string]any
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			err = json.Unmarshal(b, &obj)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: structuredContent is not a JSON object: %w", name, err)
		}
	} else if text.Len() > 0 {
		if err := json.Unmarshal([]byte(text.String()), &obj); err != nil && !res.IsError {
			return nil, fmt.Errorf("%s: result text is not a JSON object: %.200s", name, text.String())
		}
	}
	if res.IsError {
		msg := text.String()
		if m, ok := obj["error"].(string); ok {
			msg = m
		}
		if msg == "" {
			msg = "tool error without a message"
		}
		return nil, &ToolError{Message: msg, Form: ErrorIsError}
	}
	if obj == nil {
		return nil, fmt.Errorf("%s returned no JSON object (no structuredContent and no text content)", name)
	}
	if m, ok := envelope(obj); ok {
		return nil, &ToolError{Message: m, Form: ErrorEnvelope}
	}
	return obj, nil
}

// envelope reports whether a result is the error envelope: an object whose
// "error" member is a string. No nexus-core tool returns an "error" member
// on success.
func envelope(obj map[string]any) (string, bool) {
	m, ok := obj["error"].(string)
	return m, ok
}

func (t *mcpTarget) Event(context.Context, string, map[string]any) error {
	return errors.New("lifecycle events cannot be sent over MCP")
}

func (t *mcpTarget) Close() error { return t.c.Close() }

func (t *mcpTarget) withStderr(err error) error {
	if s := strings.TrimSpace(t.stderr.String()); s != "" {
		return fmt.Errorf("%w; server stderr: %s", err, s)
	}
	return err
}

// tailBuffer keeps the last limit bytes written (the server's stderr, shown
// when it misbehaves).
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.limit; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
