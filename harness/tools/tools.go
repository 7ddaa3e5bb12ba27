// Package tools implements the MCP tools nexus serves: the 11 nexus-core
// tools (plan_*, task_*, history_search, context, artifact_write). Each tool
// is a plain function over the state store; the MCP layer and the
// conformance runner call the same functions through harness.Engine, which
// validates the arguments against Params before a tool's handler (Handle) sees them.
package tools

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"sync"
	"weak"

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

	// results keeps what the read-only tools derived from an unchanged
	// file, so a long-lived server answers a repeated call in O(result).
	results resultCache
}

// resultCache holds what the read-only tools derived from a version of a
// file: task_list's answer for a cached tasks.json value, and each recent
// history_search's matches with the mark of the history.json bytes they
// cover (history.go).
type resultCache struct {
	mu sync.Mutex
	// taskList is the version taskListJSON encodes, held weakly: an
	// answer for a version the store no longer holds is never asked for
	// again, and its ten thousand tasks are not kept for it.
	taskList weak.Pointer[state.Tasks]
	encoded  []byte

	historyMu sync.Mutex // one history reader at a time (they update their state)
	history   map[historyKey]*historyMatches
	planIDs   struct {
		mark state.HistoryMark
		max  int64 // the largest plan id in the cycles mark covers
	}
}

// taskListJSON returns task_list's answer for t, a value from the store's
// cache, encoded: built and encoded once per version of tasks.json, so a
// repeated call neither re-encodes nor re-validates megabytes of tasks,
// and a new version re-uses the rendering of every task whose bytes it
// kept (Store.AppendTasksJSON). The tasks are the answer's last member (members
// are in name order), so the rest is encoded and the array put after it
// as it stands, not re-read by the encoder.
func (c *resultCache) taskListJSON(s *state.Store, t *state.Tasks) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taskList == weak.Make(t) && c.encoded != nil {
		return c.encoded, nil
	}
	head, err := state.MarshalCompact(taskListHead(t))
	if err != nil {
		return nil, err
	}
	b, err := s.AppendTasksJSON(append(head[:len(head)-1:len(head)-1], `,"tasks":`...), 1, t)
	if err != nil {
		return nil, err
	}
	b = append(b, '}')
	c.taskList, c.encoded = weak.Make(t), b
	return b, nil
}

// Annotations are the MCP tool hints; all four are always sent.
type Annotations struct {
	// Title is a short human-readable name.
	Title                                        string
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Tool is one tool.
type Tool struct {
	// Name is the abstract nexus-core name (plan_start); the MCP layer adds
	// the configured prefix (nx_plan_start).
	Name        string
	Description string
	// Params is a self-contained JSON Schema for the arguments. The engine
	// validates every call against it (after Prepare and after turning
	// numbers sent as strings into numbers), so Handle only sees valid input.
	Params      json.RawMessage
	Annotations Annotations
	// Classes are the semantic classes the capability gate knows the tool
	// by (e.g. nexus_task_creation for task_add).
	Classes []string
	// Prepare, when set, rewrites a copy of the arguments before they are
	// validated: it accepts the deprecated spellings nexus-core's own prompt
	// bodies still use (digest C10).
	Prepare func(args map[string]any)
	// ParamErrors maps a parameter name to the contract wording that must
	// start the error message when that parameter fails validation
	// (plan_update's unknown action must say "Unknown action").
	ParamErrors map[string]string
	// Handle answers a call, once the engine has checked its arguments
	// against Params and applied the gate: every tool, nexus's own, the
	// memory tools and the plugins', is called the same way.
	Handle Handler
	// Plugin names the plugin answering the tool ("" for nexus's own):
	// its strings get the plugin's limits, and it runs beside other calls.
	Plugin string
	// Unprefixed tools are served over MCP under Name as it is, without
	// the nexus prefix (plugin tools: check_decision,
	// shellguard_assess_command).
	Unprefixed bool
}

// Handler answers one tool call.
type Handler func(ctx context.Context, env *Env, args map[string]any) (*Result, error)

// Result is a tool answer as the MCP client sees it: the text, optional
// structured content (a JSON object, passed on byte for byte), and whether
// it reports a failure. A domain failure of nexus's own tools is a *Error
// instead, whose message is the answer.
type Result struct {
	Text       string
	Structured json.RawMessage
	IsError    bool
	// JSON says the answer is Structured itself, compact JSON (nexus's own
	// tools): its text is those bytes, and it is never decoded on the way
	// out.
	JSON bool
}

// Encoded is the answer of a tool whose result is already encoded
// (compact JSON, as state.MarshalCompact writes it).
func Encoded(b []byte) *Result { return &Result{Structured: b, JSON: true} }

// Object adapts a tool that answers with a JSON object to a Handler: the
// object is encoded once (compact, members sorted, no HTML escaping); nil
// is {}.
func Object(run func(ctx context.Context, env *Env, args map[string]any) (map[string]any, error)) Handler {
	return func(ctx context.Context, env *Env, args map[string]any) (*Result, error) {
		out, err := run(ctx, env, args)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]any{}
		}
		b, err := state.MarshalCompact(out)
		if err != nil {
			return nil, fmt.Errorf("encode tool result: %w", err)
		}
		return Encoded(b), nil
	}
}

type callerKey struct{}

// WithCaller says that the tool calls made with ctx come from an agent of
// the given role ("" is Lead): the engine then applies the capability gate
// to them, as the hooks do before the host runs a tool.
func WithCaller(ctx context.Context, role string) context.Context {
	return context.WithValue(ctx, callerKey{}, role)
}

// CallerFrom returns the caller's role set by WithCaller; ok is false when
// the caller is unknown.
func CallerFrom(ctx context.Context) (role string, ok bool) {
	role, ok = ctx.Value(callerKey{}).(string)
	return role, ok
}

// Error is a domain failure: the caller sees {"error": Message} and, over
// MCP, isError: true. Messages are exact contract strings.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// Errorf returns a domain error.
func Errorf(msg string) error { return &Error{Message: msg} }

// Semantic classes the capability gate maps to these tools
// (vocabulary/capabilities.yml).
const (
	ClassTaskCreation         = "nexus_task_creation"
	ClassTaskStateTransition  = "nexus_task_state_transition"
	ClassTaskMetadataModified = "nexus_task_metadata_modification"
)

//go:embed params/*.json
var paramFiles embed.FS

// params returns the embedded parameter schema of a tool.
func params(name string) json.RawMessage {
	b, err := paramFiles.ReadFile("params/" + name + ".json")
	if err != nil {
		panic(fmt.Sprintf("tools: no parameter schema for %s: %v", name, err))
	}
	return b
}

var (
	allOnce sync.Once
	all     []*Tool
)

// All returns the nexus-core tools in a stable order. The values are shared
// by every engine of the process; treat them as read-only.
func All() []*Tool {
	allOnce.Do(func() {
		all = []*Tool{
			planStart(), planStatus(), planUpdate(), planDecide(),
			taskAdd(), taskList(), taskUpdate(), taskClose(),
			historySearch(), contextTool(), artifactWrite(),
		}
	})
	return all
}

// ClassesOf maps each tool's abstract name to the semantic classes it
// declares: what the capability gate knows the tools by.
func ClassesOf(ts []*Tool) map[string][]string {
	classes := make(map[string][]string, len(ts))
	for _, t := range ts {
		classes[t.Name] = t.Classes
	}
	return classes
}

// Names returns the abstract names of the nexus-core tools, in All's order.
func Names() []string {
	ts := All()
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// branch returns the current branch, never "" (history's branch field and
// the fixtures require at least one character).
func (env *Env) branch() string {
	if env.Branch != nil {
		if b := env.Branch(); b != "" {
			return b
		}
	}
	return "unknown"
}

// readOnly are the hints of a tool that only reads .nexus files.
var readOnly = Annotations{ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: false}
