// Package pluginhost runs nexus's out-of-process plugins: it discovers their
// manifests, launches them with hashicorp/go-plugin (gRPC only, mutual TLS,
// checksum-verified, empty stdin, parent-death signal), exposes their tools,
// forwards the lifecycle events they subscribed to in a fixed order, and
// restarts a crashed plugin on its next call.
//
// Nothing is launched until it is needed: Open reads small YAML files only,
// Dispatch starts only the plugins subscribed to the event, CallTool only
// the plugin that owns the tool.
package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

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
	// OnlyEvent, for a hook process, keeps only the plugins subscribed to
	// this event (and, for pre_tool_use and post_tool_use with OnlyTool
	// set, whose subscription covers that tool): the others are neither
	// validated nor listed.
	OnlyEvent string
	OnlyTool  string
	// Settings holds each plugin's own settings, by plugin name.
	Settings map[string]map[string]string
	// Logger receives nexus's plugin log and every plugin's stderr. The
	// default writes warnings and errors to stderr; nothing is ever written
	// to stdout.
	Logger hclog.Logger
	// DisableMTLS turns off mutual TLS between host and plugin (it is
	// on by default). Only for measurements and debugging.
	DisableMTLS bool
	// goPluginAutoMTLS uses go-plugin's AutoMTLS instead of certificates
	// issued by nexus; only for comparing the two in benchmarks.
	goPluginAutoMTLS bool
	// StartTimeout bounds a plugin's launch, handshake, Info and Configure
	// (default 10s).
	StartTimeout time.Duration
	// ToolTimeout bounds a tool call whose manifest gives no timeout
	// (default 60s).
	ToolTimeout time.Duration
	// DigestCache is a file where the digests of plugin executables are
	// remembered across processes, keyed by file identity (device, inode,
	// size, modification and change time), so that short-lived processes
	// (hooks) do not re-hash an unchanged binary at every start. Keep it in
	// the user's own cache folder, never in a project. Empty: digests are
	// remembered by this Manager only.
	DigestCache string
}

const (
	defaultStartTimeout = 10 * time.Second
	defaultToolTimeout  = 60 * time.Second
)

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("plugin manager is closed")

// ErrUnknownPlugin is returned for a plugin or tool name no manifest declares.
var ErrUnknownPlugin = errors.New("no such plugin")

// Manager holds a set of plugins. It is safe for concurrent use.
type Manager struct {
	opts     Options
	log      hclog.Logger
	procs    map[string]*proc
	names    []string // sorted
	tools    map[string]ToolRef
	problems []Problem
	digests  *digestCache

	ctx    context.Context // cancelled by Close: ends starts in flight
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	bg     sync.WaitGroup // starts and kills in flight
}

// ToolRef is a declared tool, known without starting its plugin.
type ToolRef struct {
	Plugin            string        `json:"plugin"`
	Tool              string        `json:"tool"`
	Name              string        `json:"name"` // <plugin>_<tool>, as exposed over MCP
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
// folder) and returns a Manager over them. It launches nothing. Manifests
// that cannot be used are logged and reported by Problems; they never stop
// the others.
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
// see Manifest.Args and Manifest.SHA256). A duplicate name is an error.
func New(manifests []*Manifest, opts Options) (*Manager, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = defaultStartTimeout
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = defaultToolTimeout
	}
	log := opts.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: hclog.Warn, Output: os.Stderr})
	}
	m := &Manager{opts: opts, log: log, procs: map[string]*proc{}, tools: map[string]ToolRef{}, digests: newDigestCache(opts.DigestCache)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, man := range manifests {
		if man == nil {
			continue
		}
		if _, dup := m.procs[man.Name]; dup {
			return nil, fmt.Errorf("two plugins are named %q (%s and %s)", man.Name, m.procs[man.Name].man.Path, man.Path)
		}
		if man.Source == "" {
			man.Source = SourceBuiltin
		}
		if man.Source == SourceBuiltin {
			if err := man.checkBuiltin(); err != nil {
				return nil, err
			}
		}
		m.procs[man.Name] = &proc{m: m, man: man, log: log.Named(man.Name)}
		m.names = append(m.names, man.Name)
		for _, t := range man.Tools {
			ref := toolRef(man, t, opts.ToolTimeout)
			if prev, taken := m.tools[ref.Name]; taken {
				// Only possible with a built-in plugin's bare names
				// (check_decision vs a plugin "check" with a tool
				// "decision"): the earlier manifest keeps the name.
				m.problems = append(m.problems, Problem{Path: man.Path, Err: fmt.Errorf(
					"plugin %s: tool %q is not exposed: plugin %s already exposes a tool under that name", man.Name, ref.Name, prev.Plugin)})
				continue
			}
			m.tools[ref.Name] = ref
		}
	}
	sort.Strings(m.names)
	return m, nil
}

// toolRef describes a declared tool; timeout is the default for tools
// whose manifest gives none.
func toolRef(man *Manifest, t ToolDecl, timeout time.Duration) ToolRef {
	if t.Timeout > 0 {
		timeout = time.Duration(t.Timeout)
	}
	if timeout <= 0 {
		timeout = defaultToolTimeout
	}
	classes := t.CapabilityClasses
	if classes == nil {
		classes = []string{}
	}
	return ToolRef{Plugin: man.Name, Tool: t.Name, Name: man.exposedName(t.Name), CapabilityClasses: classes, Timeout: timeout}
}

// Problems lists the manifests Open could not use.
func (m *Manager) Problems() []Problem { return m.problems }

// Manifests returns the usable manifests in name order.
func (m *Manager) Manifests() []*Manifest {
	out := make([]*Manifest, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.procs[n].man)
	}
	return out
}

// Resolve finds a tool by its exposed name, without starting anything. The
// capability gate uses it before a call.
func (m *Manager) Resolve(qualified string) (ToolRef, bool) {
	t, ok := m.tools[qualified]
	return t, ok
}

// DeclaredTools lists every declared tool in plugin then manifest order,
// without starting anything.
func (m *Manager) DeclaredTools() []ToolRef {
	var out []ToolRef
	for _, n := range m.names {
		man := m.procs[n].man
		for _, t := range man.Tools {
			if ref, ok := m.tools[man.exposedName(t.Name)]; ok && ref.Plugin == n {
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
	var withTools []*proc
	for _, n := range m.names {
		if p := m.procs[n]; len(p.man.Tools) > 0 {
			withTools = append(withTools, p)
		}
	}
	insts := make([]*instance, len(withTools))
	errs := make([]error, len(withTools))
	var wg sync.WaitGroup
	for i, p := range withTools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			insts[i], errs[i] = p.get(ctx)
		}()
	}
	wg.Wait()
	var out []Tool
	for i, p := range withTools {
		if errs[i] != nil {
			continue
		}
		for _, t := range p.man.Tools {
			spec, ok := insts[i].tools[t.Name]
			ref, exposed := m.tools[p.man.exposedName(t.Name)]
			if !ok || !exposed || ref.Plugin != p.man.Name {
				continue
			}
			out = append(out, Tool{ToolRef: ref, Spec: spec})
		}
	}
	return out, errors.Join(errs...)
}

// CallTool calls a tool by its exposed name (<plugin>_<tool>), starting or
// restarting its plugin as needed. The call is bounded by the tool's
// timeout and by ctx. Arguments must already be validated.
func (m *Manager) CallTool(ctx context.Context, qualified string, args json.RawMessage) (*sdk.ToolResult, error) {
	ref, ok := m.tools[qualified]
	if !ok {
		return nil, fmt.Errorf("tool %q: %w declares it", qualified, ErrUnknownPlugin)
	}
	p := m.procs[ref.Plugin]
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var res *sdk.ToolResult
	err := p.do(ctx, ref.Timeout, "tool "+ref.Tool, func(ctx context.Context, inst *instance) error {
		if _, ok := inst.tools[ref.Tool]; !ok {
			return fmt.Errorf("plugin %s does not offer the tool %q its manifest declares", ref.Plugin, ref.Tool)
		}
		var err error
		res, err = inst.rpc.CallTool(ctx, ref.Tool, args)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Close stops every plugin and waits for them to exit. Calls made after
// Close fail with ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	for _, n := range m.names {
		m.procs[n].close()
	}
	m.bg.Wait()
	return nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// goBackground runs f as tracked background work unless the manager is
// closed (then it reports false and does nothing).
func (m *Manager) goBackground(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		f()
	}()
	return true
}

// stderrWriter forwards what a plugin prints to its (redirected) stdout and
// stderr after the handshake into the log, never onto the host's stdout.
func stderrWriter(log hclog.Logger) io.Writer {
	return log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug})
}
