package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// The edge: what nexus reads of a JSON-RPC message before the MCP library
// decodes it, on stdio and HTTP alike.
//
//   - Depth. A message nesting more than jsonscan.MaxDepth levels is
//     refused before anything decodes it (encoding/json decodes nested
//     values recursively: 10,000 levels in 20 KB cost 184 MB).
//   - The id is kept as the client wrote it, so every answer carries it
//     byte for byte (9007199254740993, 1.0 and -0 included), where the
//     MCP library would have turned it into a float64.
//   - A tool call's arguments never reach the library: the message it
//     decodes has "arguments":{} in their place, and the handler decodes
//     the original text itself (exact numbers; nothing decoded before the
//     tool's parameter rules have been checked on the text).

// message is one JSON-RPC message as the edge read it.
type message struct {
	// body is what the MCP library gets: the message, with a tool call's
	// arguments replaced by {}.
	body []byte
	// id is the request id as sent (nil when absent).
	id json.RawMessage
	// args are a tool call's arguments as sent (nil when absent or not a
	// tool call); hasArgs says whether the call carried the member.
	args    json.RawMessage
	hasArgs bool
}

// edgeError answers a message the edge refuses.
func edgeError(id json.RawMessage, code int, msg string) *mcp.JSONRPCError {
	e := rpcError(rawID(id), code, msg)
	return &e
}

// rawID is the id to answer with: the text as sent, or none.
func rawID(id json.RawMessage) any {
	if len(id) == 0 {
		return nil
	}
	return id
}

// readMessage applies the edge to one message. A message it cannot make
// sense of (not JSON, not an object) is handed on unchanged: the caller's
// parser answers it with the protocol's error.
func readMessage(msg []byte) (message, *mcp.JSONRPCError) {
	m := message{body: msg}
	top, complete, dup := jsonscan.Pick(msg, "id", "method", "params")
	// The id to answer with, even if the rest is refused or broken: only
	// a whole, valid one.
	if v := top[0].Value; v != nil && len(v) <= maxIDBytes && validID(v) && json.Valid(v) {
		m.id = v
	}
	if err := jsonscan.CheckDepth(msg, jsonscan.MaxDepth); err != nil {
		return m, edgeError(m.id, mcp.INVALID_REQUEST, fmt.Sprintf("message refused: %v (the JSON-RPC envelope counts: a tool's arguments start at level 3); send flatter arguments", err))
	}
	if !complete {
		return m, nil
	}
	// Refusals about the id itself answer with id null: there is no one
	// id to repeat.
	if dup != "" {
		m.id = nil
		return m, edgeError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("invalid request: the member %q appears more than once", dup))
	}
	if v := top[0].Value; v != nil {
		if len(v) > maxIDBytes {
			return m, edgeError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("id is longer than the limit of %d bytes", maxIDBytes))
		}
		if !validID(v) {
			return m, edgeError(nil, mcp.INVALID_REQUEST, "invalid request: id must be a string, a number or null")
		}
	}
	var method string
	if json.Unmarshal(top[1].Value, &method) != nil || method != string(mcp.MethodToolsCall) || top[2].Value == nil {
		return m, nil
	}
	params := top[2]
	inner, complete, dup := jsonscan.Pick(params.Value, "arguments")
	if !complete {
		return m, nil // params is not an object: the library says so
	}
	if dup != "" {
		return m, edgeError(m.id, mcp.INVALID_REQUEST, fmt.Sprintf("invalid request: params.%s appears more than once", dup))
	}
	a := inner[0]
	if a.Value == nil {
		return m, nil
	}
	m.args, m.hasArgs = a.Value, true
	start, end := params.Start+a.Start, params.Start+a.End
	body := make([]byte, 0, len(msg)-(end-start)+2)
	body = append(body, msg[:start]...)
	body = append(body, "{}"...)
	m.body = append(body, msg[end:]...)
	return m, nil
}

// validID reports whether an id's text is a string, a number or null
// (JSON-RPC 2.0); it is only called on members of valid JSON.
func validID(v []byte) bool {
	switch c := v[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return bytes.Equal(v, []byte("null"))
}

// argsKey carries a tool call's arguments as sent, from the edge to the
// tool handler.
type argsKey struct{}

type callArgs struct {
	raw     json.RawMessage
	present bool
}

func withArgs(ctx context.Context, m message) context.Context {
	return context.WithValue(ctx, argsKey{}, callArgs{raw: m.args, present: m.hasArgs})
}

// argsFrom returns the arguments the edge kept for this call; ok is false
// when the request did not pass the edge (the library's own decoding then
// stands).
func argsFrom(ctx context.Context) (callArgs, bool) {
	a, ok := ctx.Value(argsKey{}).(callArgs)
	return a, ok
}
