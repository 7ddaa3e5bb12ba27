// Package launch runs nexus plugins: it is the pluginhost.Backend that
// starts plugin processes with hashicorp/go-plugin (gRPC only, mutual TLS,
// checksum-verified, empty stdin, parent-death signal), calls their tools,
// forwards the events they subscribed to, restarts a crashed plugin on its
// next call, and verifies plugins for `nexus plugin verify`.
//
// It links gRPC, which costs a process about 3 ms to start, so only the
// plugin host program (nexus-plugins: ServeHost, HookServer) and tests use
// it; nexus itself reaches it over a pipe (pluginhost's default Backend).
package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/jsonscan"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Manager runs the plugins of a pluginhost.Manager. It is safe for
// concurrent use.
type Manager struct {
	cat     *pluginhost.Manager
	opts    pluginhost.Options
	log     hclog.Logger
	procs   map[string]*proc
	names   []string
	digests *pluginhost.Digests

	ctx    context.Context // cancelled by Close: ends starts in flight
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	bg     sync.WaitGroup // starts and kills in flight
}

var _ pluginhost.Backend = (*Manager)(nil)

// Backend is the pluginhost.BackendFactory running plugins in this
// process.
func Backend(cat *pluginhost.Manager) (pluginhost.Backend, error) {
	return newManager(cat), nil
}

// New is pluginhost.New with plugins run in this process.
func New(manifests []*pluginhost.Manifest, opts pluginhost.Options) (*pluginhost.Manager, error) {
	opts.Backend = Backend
	return pluginhost.New(manifests, opts)
}

// Open is pluginhost.Open with plugins run in this process.
func Open(opts pluginhost.Options) (*pluginhost.Manager, error) {
	opts.Backend = Backend
	return pluginhost.Open(opts)
}

// Of returns the launch Manager behind a pluginhost.Manager whose Backend
// is this package's and has started (nil otherwise).
func Of(m *pluginhost.Manager) *Manager {
	lm, _ := m.Backend().(*Manager)
	return lm
}

// hclogOf is the go-plugin logger for a pluginhost logger: the same one
// when it is an hclog.Logger, else warnings and errors on stderr.
func hclogOf(l pluginhost.Logger) hclog.Logger {
	if h, ok := l.(hclog.Logger); ok {
		return h
	}
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: hclog.Warn, Output: os.Stderr})
}

func newManager(cat *pluginhost.Manager) *Manager {
	opts := cat.Options()
	m := &Manager{cat: cat, opts: opts, log: hclogOf(cat.Log()), procs: map[string]*proc{}, digests: pluginhost.NewDigests(opts.DigestCache)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, man := range cat.Manifests() {
		m.procs[man.Name] = &proc{m: m, man: man, log: m.log.Named(man.Name)}
		m.names = append(m.names, man.Name)
	}
	return m
}

// Tools starts every plugin that declares tools (in parallel) and returns
// the tools both declared in a manifest and described by the plugin, in
// plugin then manifest order. A plugin that fails to start is left out and
// its error joined into the returned error; the other tools are returned.
func (m *Manager) Tools(ctx context.Context) ([]pluginhost.Tool, error) {
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
	var out []pluginhost.Tool
	for i, p := range withTools {
		if errs[i] != nil {
			continue
		}
		for _, t := range p.man.Tools {
			spec, ok := insts[i].tools[t.Name]
			ref, exposed := m.cat.Resolve(p.man.ExposedName(t.Name))
			if !ok || !exposed || ref.Plugin != p.man.Name {
				continue
			}
			out = append(out, pluginhost.Tool{ToolRef: ref, Spec: spec})
		}
	}
	return out, errors.Join(errs...)
}

// CallTool calls a declared tool, starting or restarting its plugin as
// needed, bounded by the tool's timeout and by ctx.
func (m *Manager) CallTool(ctx context.Context, ref pluginhost.ToolRef, args json.RawMessage) (*sdk.ToolResult, error) {
	p, ok := m.procs[ref.Plugin]
	if !ok {
		return nil, fmt.Errorf("tool %q: %w declares it", ref.Name, pluginhost.ErrUnknownPlugin)
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
	if err := checkResult(res); err != nil {
		return nil, fmt.Errorf("plugin %s returned a result for %s that nexus refuses: %w", ref.Plugin, ref.Tool, err)
	}
	return res, nil
}

// checkResult holds a plugin's tool result to the limits of JSON nexus
// receives: structured content must be valid JSON nesting at most
// jsonscan.MaxDepth levels (nexus decodes it; deeper, the plugin host
// could not even pass it on). The check reads the bytes once and decodes
// nothing.
func checkResult(r *sdk.ToolResult) error {
	if r == nil || len(r.Structured) == 0 {
		return nil
	}
	if err := jsonscan.CheckDepth(r.Structured, jsonscan.MaxDepth); err != nil {
		return fmt.Errorf("its structured content is %w", err)
	}
	if !json.Valid(r.Structured) {
		return errors.New("its structured content is not valid JSON")
	}
	return nil
}

// Close stops every plugin and waits for them to exit. Calls made after
// Close fail with ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	// In parallel: each plugin may take a moment to exit on its own.
	var wg sync.WaitGroup
	for _, n := range m.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.procs[n].close()
		}()
	}
	wg.Wait()
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
