// Package harness is nexus's engine: one host-neutral core that the hook
// adapters, the MCP server and the conformance runner all drive. It owns the
// tool registry and the lifecycle handlers; the doors (harness/host/*,
// harness/mcpserver) only translate.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Options configure an Engine. The composition root (harness/compose)
// builds them from the configuration.
type Options struct {
	Project   string // project root
	NexusDir  string // "" = <Project>/.nexus
	HarnessID string // "" = harnessid.Default
	CoreDir   string // nexus-core distribution
	// Core and Schemas may be shared between engines (the conformance
	// runner builds one engine per fixture); nil means load from CoreDir.
	Core    *vocabulary.Core
	Schemas *schema.Set
	// Gate holds the gate's settings (tool prefix, the unplanned-edit
	// rule, the extra capabilities and denials) for calls whose caller is
	// known; the engine adds the distribution and its tools' classes.
	Gate   gate.Options
	Now    state.Clock   // nil = time.Now
	Branch func() string // nil = read .git/HEAD above Project
	// DryRun builds the engine on a store that writes nothing
	// (state.Store.DryRun): every tool and event runs as it would and
	// leaves the disk as it was (`nexus tags explain`).
	DryRun bool
}

// Engine is one project's harness.
type Engine struct {
	Layout  state.Layout
	Store   *state.Store
	Core    *vocabulary.Core
	Schemas *schema.Set
	Now     state.Clock

	branch   func() string
	gateOpts gate.Options
	toolsMu  sync.RWMutex
	tools    map[string]*tools.Tool
	gate     *gate.Gate // for calls with a known caller; rebuilt after Register
	env      *tools.Env
}

// New builds an engine.
func New(o Options) (*Engine, error) {
	id := o.HarnessID
	if id == "" {
		id = harnessid.Default
	}
	nexusDir := o.NexusDir
	if nexusDir == "" {
		nexusDir = filepath.Join(o.Project, ".nexus")
	}
	l, err := state.NewLayoutAt(o.Project, nexusDir, id)
	if err != nil {
		return nil, err
	}
	core := o.Core
	if core == nil {
		if core, err = vocabulary.LoadManifest(o.CoreDir); err != nil {
			return nil, err
		}
	}
	schemas := o.Schemas
	if schemas == nil {
		schemas = schema.NewCoreSetFS(core.Dist.FS)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	e := &Engine{Layout: l, Core: core, Schemas: schemas, Now: now, gateOpts: o.Gate, tools: map[string]*tools.Tool{}}
	e.Store = state.New(l, schemas)
	if o.DryRun {
		e.Store = e.Store.DryRun()
	}
	e.Store.Now = now
	e.branch = o.Branch
	if e.branch == nil {
		e.branch = func() string { return state.Branch(l.Project) }
	}
	e.env = &tools.Env{Store: e.Store, Branch: e.branch}
	for _, t := range tools.All() {
		e.tools[t.Name] = t
	}
	return e, nil
}

// Branch returns the project's current git branch (never "").
func (e *Engine) Branch() string { return e.branch() }

// Tools returns the registered tools sorted by name.
func (e *Engine) Tools() []*tools.Tool {
	e.toolsMu.RLock()
	defer e.toolsMu.RUnlock()
	out := make([]*tools.Tool, 0, len(e.tools))
	for _, t := range e.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tool returns a tool by abstract name.
func (e *Engine) Tool(name string) (*tools.Tool, bool) {
	e.toolsMu.RLock()
	defer e.toolsMu.RUnlock()
	t, ok := e.tools[name]
	return t, ok
}

// Register adds a tool (memory and plugin tools join the nexus-core ones).
// A tool of the same name is replaced.
func (e *Engine) Register(t *tools.Tool) {
	e.toolsMu.Lock()
	defer e.toolsMu.Unlock()
	e.tools[t.Name] = t
	e.gate = nil
}

// ToolClasses are the semantic classes the registered tools declare, by
// abstract name: what the capability gate knows them by.
func (e *Engine) ToolClasses() map[string][]string {
	return tools.ClassesOf(e.Tools())
}

// Env returns the environment tools run in.
func (e *Engine) Env() *tools.Env { return e.env }

// Call runs a tool by abstract name: the one path every call takes,
// whatever the tool (nexus's own, memory, a plugin's) and whatever the
// door (MCP, the lifecycle's [d], the conformance runner). The arguments
// are checked against the tool's parameter schema first (numbers sent as
// strings are accepted); when ctx names the caller (tools.WithCaller), the
// capability gate decides next; then the tool's handler answers. A bad
// argument, a denial and every contract failure is a *tools.Error whose
// message the caller shows as {"error": message}; other errors are
// failures of nexus, of the files it reads or of a plugin. A failing call
// changes no state file, and a panicking tool is an error, never a crash
// of the server or the runner.
func (e *Engine) Call(ctx context.Context, name string, args map[string]any) (res *tools.Result, err error) {
	t, ok := e.Tool(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("tool %s failed unexpectedly: %v\n%s", name, r, debug.Stack())
		}
	}()
	if args, err = checkArgs(t, args); err != nil {
		return nil, err
	}
	if err := e.authorize(ctx, t, args); err != nil {
		return nil, err
	}
	return t.Handle(ctx, e.env, args)
}

// CallTool is Call for a caller that works on the answer (the lifecycle,
// the conformance runner): a JSON object, decoded into JSON-shaped values
// (float64 numbers...), exactly what an MCP client receives. A tool's
// error result (a plugin's) is a *tools.Error carrying its text; a plugin's
// answer without structured content is {"text": ...}.
func (e *Engine) CallTool(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
	r, err := e.Call(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return object(r)
}

// object is an answer as a JSON object (see CallTool).
func object(r *tools.Result) (map[string]any, error) {
	if r.IsError {
		return nil, &tools.Error{Message: r.Text}
	}
	var obj map[string]any
	if len(r.Structured) > 0 {
		if err := json.Unmarshal(r.Structured, &obj); err != nil && r.JSON {
			return nil, fmt.Errorf("decode tool result: %w", err)
		}
	}
	if obj == nil {
		if r.JSON {
			return map[string]any{}, nil
		}
		return map[string]any{"text": r.Text}, nil
	}
	return obj, nil
}

// CallToolJSON is Call for a door that sends the answer on as JSON: the
// encoded answer of nexus's tools as it is, a plugin's as CallTool's object
// encoded compact.
func (e *Engine) CallToolJSON(ctx context.Context, name string, args map[string]any) ([]byte, error) {
	r, err := e.Call(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if r.JSON && !r.IsError {
		return r.Structured, nil
	}
	m, err := object(r)
	if err != nil {
		return nil, err
	}
	return state.MarshalCompact(m)
}

// authorize applies the capability gate when ctx names the caller: the
// agent's capabilities against the tool's classes, the configured extra
// denials, and the unplanned-edit rule, as a hook would before the host
// runs the call. A denial is a *tools.Error carrying the gate's reason.
func (e *Engine) authorize(ctx context.Context, t *tools.Tool, args map[string]any) error {
	role, known := tools.CallerFrom(ctx)
	if !known {
		return nil
	}
	g, err := e.callerGate()
	if err != nil {
		return fmt.Errorf("capability gate: %w", err)
	}
	cl := g.Classify(t.Name, args, nil, e.Layout.Project)
	v := g.Check(gate.Call{Role: role, Classification: cl}, state.Exists(e.Layout.TasksPath()), e.Layout.Nexus)
	if v.Decision == gate.Deny {
		return &tools.Error{Message: v.Reason}
	}
	return nil
}

// callerGate builds the gate over the registered tools' classes (once per
// set of tools).
func (e *Engine) callerGate() (*gate.Gate, error) {
	e.toolsMu.Lock()
	defer e.toolsMu.Unlock()
	if e.gate != nil {
		return e.gate, nil
	}
	ts := make([]*tools.Tool, 0, len(e.tools))
	for _, t := range e.tools {
		ts = append(ts, t)
	}
	// No host map: the caller is an MCP client, whose calls are nexus's
	// own tools and the plugins'.
	o := e.gateOpts
	o.Core, o.HostMap, o.ToolClasses = e.Core, nil, tools.ClassesOf(ts)
	g, _, err := gate.New(o)
	if err != nil {
		return nil, err
	}
	e.gate = g
	return g, nil
}
