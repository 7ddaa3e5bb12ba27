// Package tools implements the MCP tools nexus serves: the 11 nexus-core
// tools (plan_*, task_*, history_search, context, artifact_write). Each tool
// is a plain function over the state store; the MCP layer and the
// conformance runner call the same functions.
package tools

import (
	"context"
	"encoding/json"

	"github.com/nexus-harness/nexus/internal/state"
)

// Env is what a tool runs against.
type Env struct {
	Store *state.Store
	// Branch returns the current git branch (never "").
	Branch func() string
	// OnTaskClose, when set, runs after a successful task_close (automatic
	// memory gc hangs off it).
	OnTaskClose func(ctx context.Context)
}

// Annotations are the MCP tool hints; all four are always sent.
type Annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Tool is one tool.
type Tool struct {
	// Name is the abstract nexus-core name (plan_start); the MCP layer adds
	// the configured prefix (nx_plan_start).
	Name        string
	Description string
	// Params is a self-contained JSON Schema for the arguments.
	Params      json.RawMessage
	Annotations Annotations
	// Classes are the semantic classes the capability gate knows the tool
	// by (e.g. nexus_task_creation for task_add).
	Classes []string
	Run     func(ctx context.Context, env *Env, args map[string]any) (map[string]any, error)
}

// Error is a domain failure: the caller sees {"error": Message} and, over
// MCP, isError: true. Messages are exact contract strings.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// Errorf returns a domain error.
func Errorf(msg string) error { return &Error{Message: msg} }

// All returns the nexus-core tools in a stable order.
func All() []*Tool {
	return nil // filled in by the tools implementation
}
