// Package lifecycle is nexus's host-neutral lifecycle engine: one handler
// per nexus-core event (session start and end, user messages, subagent
// spawn / complete / resume, tool calls, context compaction). Host codecs
// (harness/host/<host>) turn their payloads into an Event and the Reply back
// into their protocol, and describe their host in a HostProfile; the
// conformance runner fires its fixtures' events through FixtureEvent.
//
// Every event touches only the files it needs: a post_tool_use appends one
// tool-log line (and, for a memory read, one access record); nothing here
// compiles a schema it does not write, launches a plugin or opens a socket.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/tags"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/vocabulary"
)

// ToolCaller runs nexus tools by abstract name (harness.Engine does); the
// [d] inline action records decisions through plan_decide with it.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (map[string]any, error)
}

// Options configure an Engine. The settings among them are built once from
// the configuration by the composition root (harness/compose); the zero
// value of each is the built-in default.
type Options struct {
	Store *state.Store
	Core  *vocabulary.Core
	// ToolPrefix is the prefix nexus's MCP tools are served with
	// (mcp.tool_prefix); it is also the gate's.
	ToolPrefix string
	// Gate holds the gate's settings (gate.unplanned_edit, the extra
	// capabilities and denials); the engine adds the distribution, the
	// host's map, the tool classes and the plugin tools.
	Gate gate.Options
	// LogLevel is the lowest level nexus.log records (log.level; "" =
	// info).
	LogLevel string
	// MemoryAutoGC runs memory gc at session end (memory.gc.auto).
	MemoryAutoGC bool
	// Host is the host the engine speaks to (harness/host/<host> supplies
	// it); the zero value is a host nexus knows nothing of, whose events
	// name their tools' classes themselves.
	Host HostProfile
	// Tools runs plan_decide for [d]; nil leaves [d] unrecorded (and says so).
	Tools ToolCaller
	// ToolClasses are the classes the tool registry declares per abstract
	// tool name (for the gate).
	ToolClasses map[string][]string
	// Memory is the memory lifecycle; nil = memory features off.
	Memory MemoryHandler
	// Plugins forwards each event to the plugins subscribed to it; nil =
	// no plugins.
	Plugins Plugins
	// PluginTool gives the capability classes of a plugin tool by the name
	// it is served under, for the gate (nil = plugin tools are unknown).
	PluginTool func(name string) (classes []string, ok bool)
	Now        func() time.Time // nil = the store's clock
	// Config is what the session is told of the configuration's problems
	// (configuration.go).
	Config ConfigNotice
}

// HostProfile is what the lifecycle engine needs to know of the host it
// speaks to: its tools' capability map, how it names things and spawns
// agents, and what its messages can carry. Each host package
// (harness/host/<host>) supplies its own; the engine holds no host's
// wording.
type HostProfile struct {
	// Name is the host's name, for logs.
	Name string
	// Map is the capability map of the host's own tools (nil: none);
	// Analyzers read the calls of those of its tools whose classes alone
	// cannot say what a call does (a patch tool); MCPName is how the
	// host's tool names hold an MCP tool's name (nil: mcp__<server>__<name>).
	// All three go to the gate (gate.Options).
	Map       *gate.Map
	Analyzers map[string]gate.Analyzer
	MCPName   func(hostTool string) string
	// Skills is how skill bodies' primitives read in the host (nil: the
	// neutral spelling).
	Skills *tags.Spelling
	// ContextBudget bounds the text of a reply's Context (and Notice) in
	// TextUnits, as the host counts them; 0 = unbounded. Long state
	// (status lists, the knowledge index, tracked agents) is clipped with a
	// pointer to the tool returning the rest, and a skill too long to
	// inject is named for the host to load (see SkillLoader).
	ContextBudget int
	// TextUnits is what ContextBudget counts: UTF-16 code units (the zero
	// value, a JavaScript host) or bytes.
	TextUnits Units
	// SkillLoader, when set, returns how the model loads a skill itself
	// when its text cannot be injected whole (a host's skill tool with the
	// installed skill's name); ok is false when it cannot.
	SkillLoader func(skill string) (how string, ok bool)
	// SkillArg is the argument of the host's skill tool (SkillTool) that
	// names the skill ("" = "skill").
	SkillArg string
	// InstallHint says what makes every skill loadable by the host, for a
	// skill too long to inject that SkillLoader cannot name ("" = install
	// nexus for the host).
	InstallHint string
	// LeadReminders keeps subagent_complete's notes for Lead (the
	// verification reminder) until Lead's next result of a spawn tool
	// (SpawnTools), where they reach Lead's model; for hosts whose
	// subagent-stop reply reaches no model.
	LeadReminders bool
	// SpawnTools are the host's tools that spawn (or await) a subagent:
	// Lead's next successful result of one carries the notes LeadReminders
	// keeps.
	SpawnTools []string
	// SpawnRoles completes "Roles you can spawn " in the session's first
	// context: how Lead spawns a role ("" = "as subagents (by role id)").
	SpawnRoles string
	// ToolPrefix is how the host names nexus's MCP tools before the tool
	// prefix (mcp__nexus__); AgentPrefix goes before role ids where the
	// host names agents (a plugin's agents named <plugin>:<id>).
	ToolPrefix, AgentPrefix string
	// ToolNames says, in the session's first context, how nexus's tools
	// appear (for a host that prefixes them).
	ToolNames bool
	// SkillTool is the host's tool that loads a skill by name; Lead's
	// successful call of it with a skill of the distribution makes that
	// skill the active one, as its tag would. "" = none.
	SkillTool string
	// Unfollowed, when set, reports a tool call the host gets no
	// post_tool_use for (a patch its shell tool applies itself): when the
	// gate allows it, its tool-log line is written at pre_tool_use, so the
	// files it writes count in files_touched.
	Unfollowed func(tool string, input map[string]any) bool
}

// Engine handles lifecycle events for one project and harness.
type Engine struct {
	o   Options
	log *Logger

	gate     *gate.Gate
	detector *tags.Detector
}

// New builds an engine. The gate and the tag table are built on first use.
func New(o Options) *Engine {
	e := &Engine{o: o}
	e.log = &Logger{Store: o.Store, Min: o.LogLevel, Now: e.now}
	return e
}

func (e *Engine) now() time.Time {
	if e.o.Now != nil {
		return e.o.Now()
	}
	if e.o.Store != nil && e.o.Store.Now != nil {
		return e.o.Store.Now()
	}
	return time.Now()
}

// Log returns the engine's nexus.log writer.
func (e *Engine) Log() *Logger { return e.log }

// Store returns the state store the engine works on (a host keeping
// records of its own in the harness's namespace writes them through it).
func (e *Engine) Store() *state.Store { return e.o.Store }

// Gate returns the capability gate, building it on first use.
func (e *Engine) Gate(ctx context.Context) (*gate.Gate, error) {
	if e.gate != nil {
		return e.gate, nil
	}
	o := e.o.Gate
	o.Core, o.HostMap, o.ToolPrefix, o.ToolClasses, o.PluginTool, o.ToolRefPrefix = e.o.Core, e.o.Host.Map, e.o.ToolPrefix, e.o.ToolClasses, e.o.PluginTool, e.o.Host.ToolPrefix
	o.MCPName, o.Analyzers = e.o.Host.MCPName, e.o.Host.Analyzers
	g, warnings, err := gate.New(o)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		e.log.Log(ctx, "warn", PreToolUse, "", w)
	}
	e.gate = g
	return g, nil
}

// Detector returns the tag detector of the distribution.
func (e *Engine) Detector() *tags.Detector {
	if e.detector == nil {
		e.detector = tags.New(e.o.Core.Tags())
	}
	return e.detector
}

// Handle runs one event, then hands it to the plugins subscribed to it
// (see Plugins). A returned error means the event could not be handled;
// the caller decides what the host sees (fail-open or closed).
func (e *Engine) Handle(ctx context.Context, ev Event) (Reply, error) {
	r, err := e.handle(ctx, ev)
	if err != nil {
		return r, err
	}
	name, _ := CanonicalName(ev.Name)
	if e.o.Plugins != nil && name != Ignore {
		ev.Name = name
		r = e.withPlugins(ctx, ev, r)
	}
	if name != SessionStart && name != Ignore {
		r = e.configNotice(ctx, ev, r)
	}
	return r, nil
}

func (e *Engine) handle(ctx context.Context, ev Event) (r Reply, err error) {
	name, ok := CanonicalName(ev.Name)
	if !ok {
		return Reply{}, ev.Validate()
	}
	ev.Name = name
	if err := ev.Validate(); err != nil {
		return Reply{}, err
	}
	if e.o.Store == nil || e.o.Core == nil {
		return Reply{}, errors.New("lifecycle engine has no state store or distribution")
	}
	switch ev.Name {
	case SessionStart:
		return e.sessionStart(ctx, ev)
	case UserMessage:
		return e.userMessage(ctx, ev)
	case SubagentSpawn:
		return e.subagentSpawn(ctx, ev)
	case SubagentComplete:
		return e.subagentComplete(ctx, ev)
	case SubagentResume:
		return e.subagentResume(ctx, ev)
	case PreToolUse:
		return e.preToolUse(ctx, ev)
	case PostToolUse:
		return e.postToolUse(ctx, ev)
	case SessionEnd:
		return e.sessionEnd(ctx, ev)
	case ContextCompact:
		return e.contextCompact(ctx, ev)
	case Ignore:
		return Reply{}, nil
	}
	return Reply{}, fmt.Errorf("no handler for event %q", ev.Name)
}
