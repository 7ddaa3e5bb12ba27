// Package lifecycle is nexus's host-neutral lifecycle engine: one handler
// per nexus-core event (session start and end, user messages, subagent
// spawn / complete / resume, tool calls, context compaction). Host adapters
// (harness/host/claude, harness/host/neutral) turn their payloads into an
// Event and the Reply back into their protocol; the conformance runner calls
// AgentSpawn / AgentComplete / AgentResume (or FixtureEvent) directly.
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
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/vocabulary"
)

// ToolCaller runs nexus tools by abstract name (harness.Engine does); the
// [d] inline action records decisions through plan_decide with it.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (map[string]any, error)
}

// Options configure an Engine.
type Options struct {
	Store  *state.Store
	Core   *vocabulary.Core
	Config *config.Config // nil = defaults
	// Host selects the capability map and how skill bodies spell
	// primitives: "claude" or "neutral".
	Host string
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
	// ContextBudget bounds the text of a reply's Context (and Notice) in
	// UTF-16 units, as the host counts them; 0 = unbounded. Long state
	// (status lists, the knowledge index, tracked agents) is clipped with a
	// pointer to the tool returning the rest, and a skill too long to
	// inject is named for the host to load (see SkillLoader).
	ContextBudget int
	// SkillLoader, when set, returns how the model loads a skill itself
	// when its text cannot be injected whole (Claude Code: the Skill tool
	// with the installed skill's name); ok is false when it cannot.
	SkillLoader func(skill string) (how string, ok bool)
	// LeadReminders keeps subagent_complete's notes for Lead (the
	// verification reminder) until Lead's next result of a spawn tool
	// (SpawnTools), where they reach Lead's model; for hosts whose
	// subagent-stop reply reaches no model (Claude Code).
	LeadReminders bool
	// SpawnTools are the host's tools that spawn a subagent (Claude Code:
	// Agent, and Task before 2.1).
	SpawnTools []string
	// HostToolPrefix is how the host names nexus's MCP tools before the
	// tool prefix ("" = mcp__nexus__ for Claude Code); AgentPrefix goes
	// before role ids where the host names agents (Claude Code names a
	// plugin's agents nexus:<id>).
	HostToolPrefix, AgentPrefix string
	// SkillTool is the host's tool that loads a skill by name (Claude
	// Code: Skill, input {"skill": NAME}); Lead's successful call of it
	// with a skill of the distribution makes that skill the active one,
	// as its tag would. "" = none.
	SkillTool string
}

// Engine handles lifecycle events for one project and harness.
type Engine struct {
	o   Options
	cfg *config.Config
	log *Logger

	gate     *gate.Gate
	detector *tags.Detector
}

// New builds an engine. The gate and the tag table are built on first use.
func New(o Options) *Engine {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Defaults()
	}
	if o.Host == "" {
		o.Host = gate.HostNeutral
	}
	e := &Engine{o: o, cfg: cfg}
	e.log = &Logger{Store: o.Store, Min: cfg.String("log.level"), Now: e.now}
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

// Gate returns the capability gate, building it on first use.
func (e *Engine) Gate(ctx context.Context) (*gate.Gate, error) {
	if e.gate != nil {
		return e.gate, nil
	}
	g, warnings, err := gate.New(gate.Options{Core: e.o.Core, Host: e.o.Host, Config: e.cfg, ToolClasses: e.o.ToolClasses, PluginTool: e.o.PluginTool, ToolRefPrefix: e.o.HostToolPrefix})
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
	if err != nil || e.o.Plugins == nil {
		return r, err
	}
	if name, _ := CanonicalName(ev.Name); name != Ignore {
		ev.Name = name
		r = e.withPlugins(ctx, ev, r)
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
