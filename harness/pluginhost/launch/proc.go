package launch

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/jsonscan"
	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/hostside"
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
	runner   *procRunner
	conn     *grpc.ClientConn // nil when go-plugin's client is not gRPC
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

// exited reports whether the process is gone. The runner knows first: it
// is reaped there, and go-plugin marks its client exited only after it has
// logged the exit, so a call arriving in between would still be sent to
// the dead process and fail, though it was never in flight.
func (i *instance) exited() bool {
	return (i.runner != nil && i.runner.hasExited()) || i.client.Exited()
}

// Stopping a plugin: go-plugin's GRPCController.Shutdown (pluginserver.Serve answers
// it and exits), up to stopGrace for the process to go. A plugin that does
// not serve the controller (UNIMPLEMENTED) gets SIGTERM and up to
// termGrace, so that its stop does not cost go-plugin's 2 s wait for an
// exit that would never come. Whatever is left is killed.
const (
	stopGrace = 2 * time.Second
	termGrace = 500 * time.Millisecond
)

// stop ends the process and releases what go-plugin holds for it.
func (i *instance) stop() {
	if r := i.runner; r != nil && i.conn != nil && !r.hasExited() {
		ctx, cancel := context.WithTimeout(context.Background(), termGrace)
		err := i.conn.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{})
		cancel()
		grace := stopGrace
		if err != nil && status.Code(err) != codes.Unavailable && status.Code(err) != codes.Canceled {
			// No controller (or it failed): ask the process itself.
			r.terminate()
			grace = termGrace
		} // Unavailable/Canceled: the server stopped while answering.
		select {
		case <-r.waited:
		case <-time.After(grace):
			_ = r.Kill(context.Background())
		}
	}
	i.client.Kill()
}

// kill ends the process at once (it crashed or cannot be reached).
func (i *instance) kill() {
	if i.runner != nil {
		_ = i.runner.Kill(context.Background())
	}
	i.client.Kill()
}

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
			inst.stop()
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
	if !p.m.goBackground(inst.kill) {
		inst.kill()
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
		return fmt.Errorf("plugin %s crashed during %s (the process %s; %s); it will be restarted on the next call: %w",
			p.man.Name, what, inst.runner.exitStatus(200*time.Millisecond), inst.runner.tail, err)
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
		inst.stop()
	}
}

// launch verifies, starts and introduces one plugin process, all within
// the plugin's start deadline (its manifest's start_timeout, else
// Options.StartTimeout): the handshake, Info and Configure. A failure says
// what the plugin did, how its process ended and its last stderr lines.
func (p *proc) launch(ctx context.Context, track bool) (*instance, error) {
	t0 := time.Now()
	opts := p.m.opts
	startTimeout := p.man.StartDeadline(opts.StartTimeout)
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
	tail := &lineTail{}
	stdio := newLineSink(log, tail) // what pluginserver.Serve forwards from os.Stdout/os.Stderr
	var rn atomic.Pointer[procRunner]
	exited := func() bool { r := rn.Load(); return r != nil && r.hasExited() }
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostside.Handshake(),
		VersionedPlugins: hostside.Plugins(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		RunnerFunc: func(l hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
			r, err := newProcRunner(l, newLineSink(log, tail), tail, p.man, append(cmd.Env, tlsEnv...))
			if err != nil {
				return nil, err
			}
			rn.Store(r)
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
		StartTimeout:    startTimeout,
		Logger:          goPluginLogger{Logger: log, exited: exited},
		SyncStdout:      stdio,
		SyncStderr:      stdio,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReplyBytes))},
	})
	if track {
		defer func() {
			p.mu.Lock()
			p.launching = nil
			p.mu.Unlock()
		}()
	}
	// fail stops what was started and describes the failure with what
	// became of the process and what it last wrote.
	fail := func(what string, err error) (*instance, error) {
		suffix := ""
		if err != nil {
			suffix = ": " + err.Error()
		}
		r := rn.Load()
		if r == nil || r.ID() == "" { // never ran
			client.Kill()
			return nil, &StartError{Plugin: p.man.Name, Msg: what + suffix, Err: err}
		}
		if !r.hasExited() {
			_ = r.Kill(context.Background())
		}
		end := r.exitStatus(time.Second)
		client.Kill()
		return nil, &StartError{Plugin: p.man.Name, Msg: fmt.Sprintf("%s; the process %s; %s%s", what, end, r.tail, suffix), Err: err}
	}
	rpcClient, err := client.Client()
	if err != nil {
		return fail(handshakeFailure(err, startTimeout, p.man.ExecutablePath()), nil)
	}
	impl, err := hostside.Dispense(rpcClient)
	if err != nil {
		return fail("dispense", err)
	}
	ctx, cancel := context.WithDeadline(ctx, t0.Add(startTimeout))
	defer cancel()
	callFailure := func(call string, err error) string {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return fmt.Sprintf("no answer to %s within its %s start deadline", call, startTimeout)
		}
		return call + " failed"
	}
	info, err := impl.Info(ctx)
	if err != nil {
		return fail(callFailure("Info", err), err)
	}
	// Built-in plugins keep their data where they document (the decision
	// store in NAURO_HOME): no folder is made for them.
	var dataDir string
	if p.man.Source != pluginhost.SourceBuiltin {
		if dataDir, err = pluginhost.DataDirBeneath(opts.DataAnchor, opts.DataRoot, p.man.Name); err != nil {
			return fail("no data folder", err)
		}
	}
	cfg := &sdk.Config{Settings: opts.Settings[p.man.Name], DataDir: dataDir}
	if p.man.ProjectDir {
		cfg.ProjectDir = opts.ProjectDir
	}
	// A plugin that does not implement Configure takes no settings.
	if err := impl.Configure(ctx, cfg); err != nil && !errors.Is(err, sdk.ErrUnimplemented) {
		return fail(callFailure("Configure", err), err)
	}
	inst := &instance{
		client:   client,
		runner:   rn.Load(),
		rpc:      impl,
		info:     info,
		mtls:     !opts.DisableMTLS,
		tls:      tlsConfig,
		protocol: client.NegotiatedVersion(),
		digest:   digest,
	}
	if gc, ok := rpcClient.(*plugin.GRPCClient); ok {
		inst.conn = gc.Conn
	}
	inst.pid, _ = strconv.Atoi(client.ID())
	inst.tools, inst.notes = reconcile(p.man, info)
	for _, n := range inst.notes {
		log.Warn(n)
	}
	inst.startDur = time.Since(t0)
	return inst, nil
}

// StartError is a plugin that could not be started: Msg says what it did
// (no handshake within its deadline, exited, a failed Info), how its
// process ended and its last stderr lines.
type StartError struct {
	Plugin string
	Msg    string
	Err    error // the underlying error, if any
}

func (e *StartError) Error() string { return "plugin " + e.Plugin + " did not start: " + e.Msg }
func (e *StartError) Unwrap() error { return e.Err }

// handshakeFailure says in words what go-plugin's start error means.
func handshakeFailure(err error, timeout time.Duration, exe string) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Sprintf("no handshake within %s", timeout)
	case strings.Contains(msg, "plugin exited before we could connect"),
		strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		return "exited before the handshake"
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		first, _, _ := strings.Cut(msg, "\n")
		return "bad handshake line on stdout (" + strings.TrimPrefix(first, "Unrecognized remote plugin message: ") + "); see docs/plugins.md for the protocol"
	case strings.Contains(msg, "start "+exe):
		return msg
	default:
		return "handshake failed: " + msg
	}
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
	for _, e := range man.EventNames() {
		if !slices.Contains(info.Events, sdk.EventName(e)) {
			notes = append(notes, fmt.Sprintf("the manifest subscribes to %s but the plugin does not list it in Info, so it is not sent that event", e))
		}
	}
	return tools, notes
}

func checkSchemaShape(s json.RawMessage) error {
	if len(s) > maxSchemaBytes {
		return fmt.Errorf("input schema is %d bytes (limit %d)", len(s), maxSchemaBytes)
	}
	if err := jsonscan.CheckDepth(s, jsonscan.MaxDepth); err != nil {
		return fmt.Errorf("input schema is %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(s, &v); err != nil {
		return fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	return nil
}
