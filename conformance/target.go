package conformance

import (
	"context"
	"errors"
)

// Project is the scratch project one case runs in.
type Project struct {
	// Dir is the project root (and an external harness's working directory).
	Dir string
	// NexusDir is Dir/.nexus, the runtime root (NEXUS_RUNTIME_ROOT).
	NexusDir string
	// HarnessID is the namespace lifecycle events write to: the event's
	// params.harness_id when a fixture names one, else the runner's id.
	HarnessID string
}

// Target is the harness under test, for one case.
type Target interface {
	// CallTool calls a tool by its abstract nexus-core name (plan_start).
	// A domain failure, the kind a fixture can expect, is a *ToolError; any
	// other error means the target itself failed and fails the case.
	CallTool(ctx context.Context, tool string, params map[string]any) (map[string]any, error)
	// Event fires a lifecycle event (agent_spawn, agent_complete,
	// agent_resume) with the fixture's params, in Project.HarnessID's
	// namespace. Errors follow the CallTool rules.
	Event(ctx context.Context, typ string, params map[string]any) error
	// Close releases the target (stops a server process).
	Close() error
}

// Factory makes a fresh Target for each case.
type Factory interface {
	NewTarget(ctx context.Context, p Project) (Target, error)
	// EventsUnsupported returns why this kind of target cannot fire
	// lifecycle events, or "" when it can. Fixtures that use events are
	// skipped, with this reason, when it is not "".
	EventsUnsupported() string
}

// ToolsUnsupported is implemented by factories whose targets cannot call
// tools (a hook command alone): fixtures with actions are skipped with the
// reason it returns, when not "".
type ToolsUnsupported interface {
	ToolsUnsupported() string
}

// Checker is implemented by factories that can tell before a run whether
// their target starts at all (the command exists, the handshake works), so
// a broken target is one error rather than one failure per case.
type Checker interface {
	Check(ctx context.Context, scratch string) error
}

// ToolError is a failure the harness reported for a call: the error a
// fixture can expect ("error": true, "error_contains", "$.error").
type ToolError struct {
	Message string
	// Form is how the harness reported it (ErrorEnvelope, ErrorIsError,
	// ErrorJSONRPC, ErrorHook; "" in-process). Every form is an error
	// (nexus-core §6.7); only Message is compared.
	Form string
	// Note, when set, is reported with the case.
	Note string
}

// The forms a harness may report an error in.
const (
	ErrorEnvelope = "envelope" // a result that is {"error": "<message>"}
	ErrorIsError  = "isError"  // an MCP tool result with isError: true
	ErrorJSONRPC  = "jsonrpc"  // a JSON-RPC error response
	ErrorHook     = "hook"     // a hook command that exited non-zero
)

func (e *ToolError) Error() string { return e.Message }

// AsToolError returns the *ToolError in err's chain, or nil.
func AsToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	return nil
}
