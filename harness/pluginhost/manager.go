// Package pluginhost is nexus's view of its out-of-process plugins: it
// discovers and validates their manifests, exposes their declared tools,
// orders the subscribers of each lifecycle event, and has a Backend run the
// plugin processes (hashicorp/go-plugin over gRPC, mutual TLS,
// checksum-verified, empty stdin, parent-death signal, restart after a
// crash).
//
// This package itself never links gRPC, so that a hook process stays
// cheap: the Backend of the nexus binary is a separate program (the plugin
// host, nexus-plugins; see HostProgram) that runs package launch and talks
// to nexus over a pipe. The plugin host, and tests, use launch directly.
//
// Nothing is launched until it is needed: Open reads small YAML files
// only, Dispatch starts only the plugins subscribed to the event, CallTool
// only the plugin that owns the tool.
package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Options configure a Manager. The zero value works.
type Options struct {
	// ProjectDir is the project root: manifests are discovered in
	// <ProjectDir>/.nexus/plugins/*/, and it is sent to plugins whose
	// manifest sets project_dir.
	ProjectDir string
	// UserDir is the user's plugin folder; "" means DefaultUserDir().
	// NoUserPlugins skips it.
	UserDir       string
	NoUserPlugins bool
	// Paths are manifest files or plugin folders listed in configuration.
	Paths []string
	// Builtin are manifests built in code (see New), such as the decision
	// store nexus ships. They come before every discovered plugin; a
	// discovered plugin of the same name is reported as shadowed.
	Builtin []*Manifest
	// Disabled names plugins (built-in or discovered) not to load.
	Disabled []string
	// Reserved maps tool names nexus serves itself, or a plugin it bundles
	// serves (even while turned off), to who serves them; ReservedPrefixes
	// are the prefixes of nexus's own tool names (mcp.tool_prefix). A
	// discovered plugin's tool exposed under such a name, or under a name
	// a built-in plugin exposes, is refused, with the same message
	// everywhere (see Problem.Tool); the plugin's other tools and events
	// are kept.
	Reserved         map[string]string
	ReservedPrefixes []string
	// OnlyEvent, for a hook process, keeps only the plugins subscribed to
	// this event (and, for pre_tool_use and post_tool_use with OnlyTool
	// set, whose subscription covers that tool): the others are neither
	// validated nor listed.
	OnlyEvent string
	OnlyTool  string
	// DataRoot is the folder holding each plugin's data folder for this
	// project (<DataRoot>/<name>/, sent in Configure as DataDir): nexus
	// uses <project>/.nexus/state/<harness-id>/plugins, outside version
	// control. Empty: plugins get no data folder.
	DataRoot string
	// DataAnchor, when set, is the folder DataRoot must stay beneath (the
	// project, or the .nexus folder the user chose): the data folders are
	// created through it, so a symlinked .nexus or state/ that leads out
	// of it is refused (docs/security.md).
	DataAnchor string
	// Settings holds each plugin's own settings, by plugin name.
	Settings map[string]map[string]string
	// Logger receives the plugin log (an hclog.Logger fits). The default
	// writes warnings and errors to stderr; nothing is ever written to
	// stdout. In the plugin host process, every plugin's stderr goes there
	// too.
	Logger Logger
	// DisableMTLS turns off mutual TLS between host and plugin (it is on
	// by default). Only for measurements and debugging.
	DisableMTLS bool
	// GoPluginAutoMTLS uses go-plugin's AutoMTLS instead of certificates
	// issued by nexus; only for comparing the two in benchmarks.
	GoPluginAutoMTLS bool `json:"-"`
	// StartTimeout bounds a plugin's launch, handshake, Info and Configure
	// (default 5s) unless its manifest sets start_timeout. Each plugin
	// starts under its own deadline.
	StartTimeout time.Duration
	// ToolTimeout bounds a tool call whose manifest gives no timeout
	// (default 60s).
	ToolTimeout time.Duration
	// DigestCache is a file where the digests of plugin executables are
	// remembered across processes, keyed by file identity (device, inode,
	// size, modification and change time), so that short-lived processes
	// (hooks) do not re-hash an unchanged binary at every start. Keep it in
	// the user's own cache folder, never in a project. Empty: digests are
	// remembered by one process only.
	DigestCache string
	// Backend runs the plugin processes. nil: a plugin host process
	// (HostProgram, else nexus-plugins next to this program) started on
	// first need and stopped by Close.
	Backend BackendFactory
	// HostProgram is the plugin host executable ("" = DefaultHostProgram()).
	HostProgram string
	// HostStderr receives the plugin host's log (nil = discarded).
	HostStderr io.Writer
}

// Logger is the part of an hclog.Logger the plugin host uses.
type Logger interface {
	Debug(msg string, args ...interface{})
	Info(msg string, args ...interface{})
	Warn(msg string, args ...interface{})
	Error(msg string, args ...interface{})
}

// Defaults of Options.
const (
	DefaultStartTimeout = 5 * time.Second
	DefaultToolTimeout  = 60 * time.Second
)

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("plugin manager is closed")

// ErrUnknownPlugin is returned for a plugin or tool name no manifest declares.
var ErrUnknownPlugin = errors.New("no such plugin")

// Manager holds a set of declared plugins and, once one is needed, the
// Backend running them. It is safe for concurrent use.
type Manager struct {
	opts     Options
	log      Logger
	byName   map[string]*Manifest
	names    []string // sorted
	tools    map[string]ToolRef
	problems []Problem

	mu      sync.Mutex
	backend Backend
	closed  bool
}

// ToolRef is a declared tool, known without starting its plugin.
type ToolRef struct {
	Plugin            string        `json:"plugin"`
	Tool              string        `json:"tool"`
	Name              string        `json:"name"` // as exposed over MCP: <plugin>_<tool>, or the bare name
	CapabilityClasses []string      `json:"capability_classes"`
	Timeout           time.Duration `json:"timeout"`
}

// Tool is a declared tool together with the plugin's description of it.
type Tool struct {
	ToolRef
	Spec sdk.ToolSpec `json:"spec"`
}

// QualifiedName is how a plugin's tool is exposed: <plugin>_<tool>.
func QualifiedName(plugin, tool string) string { return plugin + "_" + tool }

// Open discovers manifests (configuration paths, the project, the user's
// folder) and returns a Manager over them and the built-in ones. It
// launches nothing. Manifests that cannot be used are logged and reported
// by Problems; they never stop the others.
func Open(opts Options) (*Manager, error) {
	discovered, problems := discoverWith(query{
		projectDir: opts.ProjectDir, userDir: opts.userDir(), paths: opts.Paths,
		onlyEvent: opts.OnlyEvent, onlyTool: opts.OnlyTool, skip: opts.skipList(),
	})
	var manifests []*Manifest
	for _, b := range opts.builtins() {
		if opts.OnlyEvent != "" {
			s, ok := b.Events[opts.OnlyEvent]
			if !ok || (isToolEvent(opts.OnlyEvent) && opts.OnlyTool != "" && !s.Matches(opts.OnlyTool)) {
				continue
			}
		}
		manifests = append(manifests, b)
	}
	m, err := New(append(manifests, discovered...), opts)
	if err != nil {
		return nil, err
	}
	m.problems = append(problems, m.problems...)
	for _, p := range problems {
		m.log.Error("plugin not loaded", "path", p.Path, "error", p.Err)
	}
	return m, nil
}

// New returns a Manager over manifests already loaded, or built in code
// (Source empty or SourceBuiltin: such a manifest is checked here and needs
// Name, ProtocolVersion, Executable and, when Executable is relative, Dir;
// see Manifest.Args, Manifest.SHA256 and Manifest.BareToolNames). A
// duplicate name is an error.
func New(manifests []*Manifest, opts Options) (*Manager, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = DefaultToolTimeout
	}
	log := opts.Logger
	if log == nil {
		log = stderrLogger{}
		opts.Logger = log
	}
	m := &Manager{opts: opts, log: log, byName: map[string]*Manifest{}, tools: map[string]ToolRef{}}
	for _, man := range manifests {
		if man == nil {
			continue
		}
		if prev, dup := m.byName[man.Name]; dup {
			return nil, fmt.Errorf("two plugins are named %q (%s and %s)", man.Name, prev.Path, man.Path)
		}
		if man.Source == "" {
			man.Source = SourceBuiltin
		}
		if man.Source == SourceBuiltin {
			if err := man.checkBuiltin(); err != nil {
				return nil, err
			}
		}
		m.byName[man.Name] = man
		m.names = append(m.names, man.Name)
	}
	// Built-in plugins' names first, whatever the order of manifests: the
	// names they expose are reserved.
	for _, builtin := range []bool{true, false} {
		for _, man := range manifests {
			if man == nil || (man.Source == SourceBuiltin) != builtin {
				continue
			}
			for _, t := range man.Tools {
				ref := toolRef(man, t, opts.ToolTimeout)
				if !builtin {
					if owner, reserved := opts.reservedBy(ref.Name); reserved {
						m.problems = append(m.problems, refusal(man, t.Name, ref.Name, owner))
						continue
					}
				}
				if prev, taken := m.tools[ref.Name]; taken {
					if m.byName[prev.Plugin].Source == SourceBuiltin {
						m.problems = append(m.problems, refusal(man, t.Name, ref.Name, "nexus's built-in plugin "+prev.Plugin+" serves it"))
						continue
					}
					m.problems = append(m.problems, Problem{Path: man.Path, Plugin: man.Name, Tool: t.Name, Err: fmt.Errorf(
						"plugin %s: tool %q is not served: plugin %s already serves %s", man.Name, t.Name, prev.Plugin, ref.Name)})
					continue
				}
				m.tools[ref.Name] = ref
			}
		}
	}
	sort.Strings(m.names)
	return m, nil
}

// reservedBy says who serves an exposed tool name a discovered plugin may
// not take: a built-in plugin (even one turned off, through Reserved), or
// nexus itself (ReservedPrefixes).
func (o Options) reservedBy(exposed string) (string, bool) {
	for _, b := range o.Builtin {
		if b == nil {
			continue
		}
		for _, t := range b.Tools {
			if b.exposedName(t.Name) == exposed {
				return "nexus's built-in plugin " + b.Name + " serves it", true
			}
		}
	}
	if who, ok := o.Reserved[exposed]; ok {
		return who + " serves it", true
	}
	for _, p := range o.ReservedPrefixes {
		if p != "" && strings.HasPrefix(exposed, p) {
			return "nexus's own tools are named " + p + "*", true
		}
	}
	return "", false
}

// refusal is the one message for a tool refused for its name, printed by
// `nexus plugin list` and `verify`, `nexus mcp` and logged by hooks.
func refusal(man *Manifest, tool, exposed, owner string) Problem {
	return Problem{Path: man.Path, Plugin: man.Name, Tool: tool, Err: fmt.Errorf(
		"plugin %s: tool %q is not served: its name %s is reserved (%s); rename the plugin or the tool", man.Name, tool, exposed, owner)}
}

// Refused lists the tools of a plugin refused for their name.
func (m *Manager) Refused(plugin string) []Problem {
	var out []Problem
	for _, p := range m.problems {
		if p.Plugin == plugin && p.Tool != "" {
			out = append(out, p)
		}
	}
	return out
}

// toolRef describes a declared tool; timeout is the default for tools
// whose manifest gives none.
func toolRef(man *Manifest, t ToolDecl, timeout time.Duration) ToolRef {
	if t.Timeout > 0 {
		timeout = time.Duration(t.Timeout)
	}
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	classes := t.CapabilityClasses
	if classes == nil {
		classes = []string{}
	}
	return ToolRef{Plugin: man.Name, Tool: t.Name, Name: man.exposedName(t.Name), CapabilityClasses: classes, Timeout: timeout}
}

// Options returns the options the Manager was made with (defaults filled).
func (m *Manager) Options() Options { return m.opts }

// Log returns the Manager's logger.
func (m *Manager) Log() Logger { return m.log }

// Problems lists the manifests Open could not use.
func (m *Manager) Problems() []Problem { return m.problems }

// Manifests returns the usable manifests in name order.
func (m *Manager) Manifests() []*Manifest {
	out := make([]*Manifest, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.byName[n])
	}
	return out
}

// Manifest returns one plugin's manifest.
func (m *Manager) Manifest(name string) (*Manifest, bool) {
	man, ok := m.byName[name]
	return man, ok
}

// Resolve finds a tool by its exposed name, without starting anything. The
// capability gate uses it before a call.
func (m *Manager) Resolve(exposed string) (ToolRef, bool) {
	t, ok := m.tools[exposed]
	return t, ok
}

// DeclaredTools lists every declared tool in plugin then manifest order,
// without starting anything.
func (m *Manager) DeclaredTools() []ToolRef {
	var out []ToolRef
	for _, n := range m.names {
		man := m.byName[n]
		for _, t := range man.Tools {
			if ref, ok := m.tools[man.exposedName(t.Name)]; ok && ref.Plugin == n {
				out = append(out, ref)
			}
		}
	}
	return out
}

// getBackend returns the backend, starting it on first use.
func (m *Manager) getBackend() (Backend, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if m.backend == nil {
		factory := m.opts.Backend
		if factory == nil {
			factory = hostProcess
		}
		b, err := factory(m)
		if err != nil {
			return nil, err
		}
		m.backend = b
	}
	return m.backend, nil
}

// Backend returns the Backend once one has started (nil before).
func (m *Manager) Backend() Backend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backend
}

// StartBudget is the longest start deadline among the plugins that
// declare tools: how long Tools may take.
func (m *Manager) StartBudget() time.Duration {
	var d time.Duration
	for _, n := range m.names {
		if man := m.byName[n]; len(man.Tools) > 0 {
			d = max(d, man.StartDeadline(m.opts.StartTimeout))
		}
	}
	return d
}

// Known returns the tools whose manifest carries the plugin's own
// description of them (Manifest.Specs), in plugin then manifest order,
// without starting anything.
func (m *Manager) Known() []Tool {
	var out []Tool
	for _, n := range m.names {
		man := m.byName[n]
		for _, t := range man.Tools {
			ref, ok := m.tools[man.exposedName(t.Name)]
			if !ok || ref.Plugin != man.Name {
				continue // refused for its name
			}
			for _, s := range man.Specs {
				if s.Name == t.Name {
					out = append(out, Tool{ToolRef: ref, Spec: s})
					break
				}
			}
		}
	}
	return out
}

// Undescribed returns the declared tools without a spec in their
// manifest: only Tools, which starts the plugins, can describe them.
func (m *Manager) Undescribed() []ToolRef {
	var out []ToolRef
	for _, n := range m.names {
		man := m.byName[n]
		for _, t := range man.Tools {
			ref, ok := m.tools[man.exposedName(t.Name)]
			if ok && ref.Plugin == man.Name && !slices.ContainsFunc(man.Specs, func(s sdk.ToolSpec) bool { return s.Name == t.Name }) {
				out = append(out, ref)
			}
		}
	}
	return out
}

// Tools starts every plugin that declares tools (in parallel) and returns
// the tools both declared in a manifest and described by the plugin, in
// plugin then manifest order. A plugin that fails to start is left out and
// its error joined into the returned error; the other tools are returned.
func (m *Manager) Tools(ctx context.Context) ([]Tool, error) {
	if len(m.tools) == 0 {
		return nil, nil
	}
	b, err := m.getBackend()
	if err != nil {
		return nil, err
	}
	return b.Tools(ctx)
}

// CallTool calls a tool by its exposed name, starting or restarting its
// plugin as needed. The call is bounded by the tool's timeout and by ctx.
// Arguments must already be validated.
func (m *Manager) CallTool(ctx context.Context, exposed string, args json.RawMessage) (*sdk.ToolResult, error) {
	ref, ok := m.tools[exposed]
	if !ok {
		return nil, fmt.Errorf("tool %q: %w declares it", exposed, ErrUnknownPlugin)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	b, err := m.getBackend()
	if err != nil {
		return nil, err
	}
	return b.CallTool(ctx, ref, args)
}

// Verify starts a separate process of the plugin (the managed one, if any,
// is left alone), checks it end to end and stops it. A plugin that cannot
// be verified gives a report with OK false and Error set; the error return
// is only for an unknown name, a closed manager or a missing plugin host.
func (m *Manager) Verify(ctx context.Context, name string) (*VerifyReport, error) {
	if _, ok := m.byName[name]; !ok {
		return nil, fmt.Errorf("plugin %q: %w is declared with that name", name, ErrUnknownPlugin)
	}
	b, err := m.getBackend()
	if err != nil {
		return nil, err
	}
	return b.Verify(ctx, name)
}

// Close stops every plugin and waits for them to exit. Calls made after
// Close fail with ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	b := m.backend
	m.mu.Unlock()
	if b != nil {
		return b.Close()
	}
	return nil
}

// stderr is where the default Logger writes.
var stderr io.Writer = os.Stderr

// stderrLogger is the default Logger: warnings and errors on stderr.
type stderrLogger struct{}

func (stderrLogger) Debug(string, ...interface{}) {}
func (stderrLogger) Info(string, ...interface{})  {}
func (stderrLogger) Warn(msg string, args ...interface{}) {
	logTo(stderr, "WARN", msg, args)
}
func (stderrLogger) Error(msg string, args ...interface{}) {
	logTo(stderr, "ERROR", msg, args)
}

func logTo(w io.Writer, level, msg string, args []interface{}) {
	line := "[" + level + "] plugins: " + msg
	for i := 0; i+1 < len(args); i += 2 {
		line += fmt.Sprintf(" %v=%v", args[i], args[i+1])
	}
	fmt.Fprintln(w, line)
}

// NopLogger discards the plugin log.
type NopLogger struct{}

func (NopLogger) Debug(string, ...interface{}) {}
func (NopLogger) Info(string, ...interface{})  {}
func (NopLogger) Warn(string, ...interface{})  {}
func (NopLogger) Error(string, ...interface{}) {}
