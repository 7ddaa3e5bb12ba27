package launch

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// maxReplyBytes bounds one message from a plugin (go-plugin's default is
// 2 GiB); tool results larger than this are a plugin bug.
const maxReplyBytes = 16 << 20

// maxSchemaBytes bounds one tool's input schema.
const maxSchemaBytes = 256 << 10

// Restart backoff: the first restart after a crash is immediate, later
// consecutive failures wait 250ms, 500ms, ... up to 30s. A successful call
// resets the count.
const (
	backoffBase = 250 * time.Millisecond
	backoffMax  = 30 * time.Second
)

func backoff(failures int) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := backoffBase
	for i := 2; i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// proc is one declared plugin and its current process, if any.
type proc struct {
	m   *Manager
	man *pluginhost.Manifest
	log hclog.Logger

	mu        sync.Mutex
	inst      *instance
	starting  chan struct{} // closed when the start in flight ends
	startErr  error         // outcome of the last start
	failures  int           // consecutive crashes and failed starts
	retryAt   time.Time     // no start before this
	lastErr   error
	restarts  int // processes started after the first
	started   int // processes started
	closed    bool
	launching *procRunner // the process being started, killed by close
}

// instance is one running plugin process.
type instance struct {
	client   *plugin.Client
	rpc      sdk.Plugin
	info     *sdk.Info
	tools    map[string]sdk.ToolSpec // declared and offered
	notes    []string                // differences between manifest and Info
	pid      int
	mtls     bool
	tls      *tls.Config // nexus's side, when mtls
	protocol int
	digest   string
	startDur time.Duration
}

func (i *instance) exited() bool { return i.client.Exited() }

// get returns the running instance, starting one when there is none. It
// never waits past ctx; a start continues in the background so the next
// caller finds it running.
func (p *proc) get(ctx context.Context) (*instance, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, pluginhost.ErrClosed
		}
		if inst := p.inst; inst != nil {
			if !inst.exited() {
				p.mu.Unlock()
				return inst, nil
			}
			p.retireLocked(inst, errors.New("the plugin process exited"))
		}
		if p.starting == nil {
			if wait := time.Until(p.retryAt); wait > 0 {
				err := fmt.Errorf("plugin %s is restarting after %d failures in a row (last: %v); next attempt in %s",
					p.man.Name, p.failures, p.lastErr, wait.Round(time.Millisecond))
				p.mu.Unlock()
				return nil, err
			}
			ch := make(chan struct{})
			if !p.m.goBackground(func() { p.start(ch) }) {
				p.mu.Unlock()
				return nil, pluginhost.ErrClosed
			}
			p.starting = ch
		}
		ch := p.starting
		p.mu.Unlock()

		select {
		case <-ch:
			p.mu.Lock()
			inst, err := p.inst, p.startErr
			p.mu.Unlock()
			if inst == nil {
				if err == nil {
					err = pluginhost.ErrClosed
				}
				return nil, err
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("plugin %s: still starting: %w", p.man.Name, ctx.Err())
		}
	}
}

// kick begins a start in the background when there is no process, no start
// in flight and no backoff to honour.
func (p *proc) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.inst != nil || p.starting != nil || time.Now().Before(p.retryAt) {
		return
	}
	ch := make(chan struct{})
	if p.m.goBackground(func() { p.start(ch) }) {
		p.starting = ch
	}
}

// start launches a process and publishes the outcome.
func (p *proc) start(ch chan struct{}) {
	inst, err := p.launch(p.m.ctx, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	defer close(ch)
	p.starting = nil
	p.startErr = err
	if p.closed {
		if inst != nil {
			inst.client.Kill()
		}
		return
	}
	if err != nil {
		p.failures++
		p.lastErr = err
		p.retryAt = time.Now().Add(backoff(p.failures))
		p.log.Error("plugin failed to start", "error", err, "failures", p.failures)
		return
	}
	if p.started > 0 {
		p.restarts++
	}
	p.started++
	p.inst = inst
	p.log.Debug("plugin started", "pid", inst.pid, "took", inst.startDur)
}

// retireLocked drops a dead (or unreachable) instance and schedules its
// cleanup. Only the first report about an instance counts.
func (p *proc) retireLocked(inst *instance, cause error) {
	if p.inst != inst {
		return
	}
	p.inst = nil
	p.failures++
	p.lastErr = cause
	p.retryAt = time.Now().Add(backoff(p.failures))
	p.log.Warn("plugin crashed; it will be restarted on the next call", "pid", inst.pid, "error", cause, "failures", p.failures)
	if !p.m.goBackground(inst.client.Kill) {
		inst.client.Kill()
	}
}

// do runs one call against the plugin, bounded by timeout and ctx. A crash
// during the call retires the process (the next call starts a fresh one);
// a success resets the failure count.
func (p *proc) do(ctx context.Context, timeout time.Duration, what string, call func(context.Context, *instance) error) error {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	inst, err := p.get(callCtx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("plugin %s: %s: not started within its %s timeout: %w", p.man.Name, what, timeout, err)
		}
		return err
	}
	err = call(callCtx, inst)
	switch {
	case err == nil:
		p.mu.Lock()
		p.failures = 0
		p.mu.Unlock()
		return nil
	case errors.Is(err, sdk.ErrUnavailable) || inst.exited():
		p.mu.Lock()
		p.retireLocked(inst, err)
		p.mu.Unlock()
		return fmt.Errorf("plugin %s crashed during %s; it will be restarted on the next call: %w", p.man.Name, what, err)
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("plugin %s: %s: no answer within its %s timeout: %w", p.man.Name, what, timeout, err)
	default:
		return fmt.Errorf("plugin %s: %s: %w", p.man.Name, what, err)
	}
}

// close stops the process, if any.
func (p *proc) close() {
	p.mu.Lock()
	p.closed = true
	inst := p.inst
	p.inst = nil
	launching := p.launching
	p.mu.Unlock()
	if launching != nil {
		_ = launching.Kill(context.Background())
	}
	if inst != nil {
		inst.client.Kill()
	}
}

// launch verifies, starts and introduces one plugin process.
func (p *proc) launch(ctx context.Context, track bool) (*instance, error) {
	t0 := time.Now()
	opts := p.m.opts
	digest, err := pluginhost.CheckDigest(p.man, p.m.digests)
	if err != nil {
		return nil, err
	}
	log := p.log
	var tlsConfig *tls.Config
	var tlsEnv []string
	if !opts.DisableMTLS && !opts.GoPluginAutoMTLS {
		id, err := issueTLS()
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", p.man.Name, err)
		}
		tlsConfig, tlsEnv = id.client, id.env
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.VersionedPlugins(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		RunnerFunc: func(l hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
			r, err := newProcRunner(l, p.man, append(cmd.Env, tlsEnv...))
			if err != nil {
				return nil, err
			}
			if !track {
				return r, nil
			}
			p.mu.Lock()
			p.launching = r
			closed := p.closed
			p.mu.Unlock()
			if closed {
				_ = r.Kill(context.Background())
			}
			return r, nil
		},
		SkipHostEnv:     true,
		Managed:         true,
		TLSConfig:       tlsConfig,
		AutoMTLS:        !opts.DisableMTLS && opts.GoPluginAutoMTLS,
		StartTimeout:    opts.StartTimeout,
		Logger:          log,
		SyncStdout:      stderrWriter(log),
		SyncStderr:      stderrWriter(log),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReplyBytes))},
	})
	if track {
		defer func() {
			p.mu.Lock()
			p.launching = nil
			p.mu.Unlock()
		}()
	}
	fail := func(err error) (*instance, error) {
		client.Kill()
		return nil, err
	}
	rpcClient, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("plugin %s: start %s: %w", p.man.Name, p.man.ExecutablePath(), err))
	}
	raw, err := rpcClient.Dispense(sdk.PluginName)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", p.man.Name, err))
	}
	impl, ok := raw.(sdk.Plugin)
	if !ok {
		return fail(fmt.Errorf("plugin %s: dispensed %T, not an sdk.Plugin", p.man.Name, raw))
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	info, err := impl.Info(ctx)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", p.man.Name, err))
	}
	cfg := &sdk.Config{Settings: opts.Settings[p.man.Name]}
	if p.man.ProjectDir {
		cfg.ProjectDir = opts.ProjectDir
	}
	if err := impl.Configure(ctx, cfg); err != nil {
		return fail(fmt.Errorf("plugin %s: %w", p.man.Name, err))
	}
	inst := &instance{
		client:   client,
		rpc:      impl,
		info:     info,
		mtls:     !opts.DisableMTLS,
		tls:      tlsConfig,
		protocol: client.NegotiatedVersion(),
		digest:   digest,
	}
	inst.pid, _ = strconv.Atoi(client.ID())
	inst.tools, inst.notes = reconcile(p.man, info)
	for _, n := range inst.notes {
		log.Warn(n)
	}
	inst.startDur = time.Since(t0)
	return inst, nil
}

// reconcile checks a plugin's Info (untrusted) against its manifest: only
// declared tools with a sane description are kept; every difference is
// noted.
func reconcile(man *pluginhost.Manifest, info *sdk.Info) (map[string]sdk.ToolSpec, []string) {
	var notes []string
	if info.Name != man.Name {
		notes = append(notes, fmt.Sprintf("the plugin calls itself %q but its manifest names it %q", info.Name, man.Name))
	}
	declared := map[string]bool{}
	for _, t := range man.Tools {
		declared[t.Name] = true
	}
	tools := map[string]sdk.ToolSpec{}
	for _, t := range info.Tools {
		switch {
		case !pluginhost.ValidToolName(t.Name):
			notes = append(notes, fmt.Sprintf("tool name %q is invalid (want %s); ignored", t.Name, pluginhost.ToolNamePattern))
			continue
		case !declared[t.Name]:
			notes = append(notes, fmt.Sprintf("tool %q is offered but not declared in the manifest; ignored", t.Name))
			continue
		case tools[t.Name].Name != "":
			notes = append(notes, fmt.Sprintf("tool %q is described twice; the first is used", t.Name))
			continue
		}
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if err := checkSchemaShape(t.InputSchema); err != nil {
			notes = append(notes, fmt.Sprintf("tool %q: %v; ignored", t.Name, err))
			continue
		}
		tools[t.Name] = t
	}
	for _, t := range man.Tools {
		if _, ok := tools[t.Name]; !ok {
			notes = append(notes, fmt.Sprintf("tool %q is declared in the manifest but the plugin does not offer it", t.Name))
		}
	}
	offered := map[string]bool{}
	for _, e := range info.Events {
		offered[e] = true
	}
	for _, e := range man.EventNames() {
		if !offered[e] {
			notes = append(notes, fmt.Sprintf("the manifest subscribes to %s but the plugin does not list it in Info", e))
		}
	}
	return tools, notes
}

func checkSchemaShape(s json.RawMessage) error {
	if len(s) > maxSchemaBytes {
		return fmt.Errorf("input schema is %d bytes (limit %d)", len(s), maxSchemaBytes)
	}
	var v map[string]any
	if err := json.Unmarshal(s, &v); err != nil {
		return fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	return nil
}
