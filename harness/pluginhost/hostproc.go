package pluginhost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// HostProgramName is the plugin host program: it runs plugins for a nexus
// process over a pipe (`nexus-plugins host`), runs the bundled decision
// store (`nexus-plugins serve decisions`) and the per-project hook server.
// It is a program of its own because gRPC, which plugins speak, costs
// every process that links it about 3 ms of start-up; nexus itself, which
// runs on every hook, does not link it.
const HostProgramName = "nexus-plugins"

// DefaultHostProgram finds the plugin host: next to the running program,
// else on PATH.
func DefaultHostProgram() (string, error) {
	// Symlinks are resolved: the hook server compares this path with its
	// own os.Executable.
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), HostProgramName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.EvalSymlinks(p)
		}
	}
	if p, err := exec.LookPath(HostProgramName); err == nil {
		if p, err = filepath.Abs(p); err == nil {
			return filepath.EvalSymlinks(p)
		}
	}
	where := "this program"
	if exe != "" {
		where = filepath.Dir(exe)
	}
	return "", fmt.Errorf("the plugin host %s is not installed in %s nor on PATH, so no plugin can run; install it with nexus (make install, or go install github.com/nexus-harness/nexus/cmd/...@latest)", HostProgramName, where)
}

// hostRequest is one request to the plugin host; hostReply its answer.
// A request may carry a deadline (milliseconds from now). "cancel" ends
// the request Of.
type hostRequest struct {
	ID        int64           `json:"id"`
	Op        string          `json:"op"`
	Options   *WireOptions    `json:"options,omitempty"`
	Manifests []*WireManifest `json:"manifests,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Event     *sdk.Event      `json:"event,omitempty"`
	Subs      []Subscriber    `json:"subs,omitempty"`
	Name      string          `json:"name,omitempty"`
	Deadline  int64           `json:"deadline_ms,omitempty"`
	Of        int64           `json:"of,omitempty"`
}

type hostReply struct {
	ID       int64              `json:"id"`
	Error    string             `json:"error,omitempty"`
	Tools    []Tool             `json:"tools,omitempty"`
	Result   *sdk.ToolResult    `json:"result,omitempty"`
	Dispatch *DispatchResult    `json:"dispatch,omitempty"`
	Verify   *VerifyReport      `json:"verify,omitempty"`
	Runtime  map[string]Runtime `json:"runtime,omitempty"`
}

// HostRequest and HostReply are the exchange with the plugin host, for
// package launch, which serves it.
type (
	HostRequest = hostRequest
	HostReply   = hostReply
)

// hostProcess is the default Backend: the plugin host program, started
// now and fed the Manager's manifests.
func hostProcess(m *Manager) (Backend, error) {
	prog := m.opts.HostProgram
	if prog == "" {
		p, err := DefaultHostProgram()
		if err != nil {
			return nil, err
		}
		prog = p
	}
	h := &hostBackend{m: m, dial: func() (io.ReadWriteCloser, func() error, error) { return startHost(prog, m.opts.HostStderr) }}
	return h, nil
}

// HostOver is a BackendFactory speaking to a plugin host over conn (tests
// and in-process hosts; the default starts the program).
func HostOver(conn io.ReadWriteCloser) BackendFactory {
	return func(m *Manager) (Backend, error) {
		used := false
		return &hostBackend{m: m, dial: func() (io.ReadWriteCloser, func() error, error) {
			if used {
				return nil, nil, errors.New("the plugin host connection is closed")
			}
			used = true
			return conn, func() error { return nil }, nil
		}}, nil
	}
}

// pipeConn joins the host's stdout and stdin.
type pipeConn struct {
	io.Reader
	io.WriteCloser
}

func startHost(prog string, stderr io.Writer) (io.ReadWriteCloser, func() error, error) {
	cmd := exec.Command(prog, "host")
	cmd.Stderr = stderr
	setHostProcAttr(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start the plugin host %s: %w", prog, err)
	}
	wait := func() error {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			return <-done
		}
	}
	return pipeConn{out, in}, wait, nil
}

// hostBackend talks to one plugin host at a time; a host that died is
// replaced on the next call (its plugins start again as needed).
type hostBackend struct {
	m    *Manager
	dial func() (io.ReadWriteCloser, func() error, error)

	mu     sync.Mutex
	conn   *hostConn
	closed bool
}

type hostConn struct {
	rw      io.ReadWriteCloser
	wait    func() error
	wmu     sync.Mutex
	enc     *json.Encoder
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan hostReply
	dead    error
	done    chan struct{}
}

func (h *hostBackend) get() (*hostConn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if h.conn != nil {
		select {
		case <-h.conn.done:
			h.conn = nil // died: start another
		default:
			return h.conn, nil
		}
	}
	rw, wait, err := h.dial()
	if err != nil {
		return nil, err
	}
	c := &hostConn{rw: rw, wait: wait, enc: json.NewEncoder(rw), pending: map[int64]chan hostReply{}, done: make(chan struct{})}
	go c.read()
	w := h.m.opts.Wire()
	var mans []*WireManifest
	for _, man := range h.m.Manifests() {
		mans = append(mans, WireOf(man))
	}
	if _, err := c.do(context.Background(), hostRequest{Op: "open", Options: &w, Manifests: mans}); err != nil {
		c.close()
		return nil, fmt.Errorf("plugin host: %w", err)
	}
	h.conn = c
	return c, nil
}

func (c *hostConn) read() {
	r := bufio.NewReaderSize(c.rw, 64<<10)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		if len(line) > 0 {
			var rep hostReply
			if jerr := json.Unmarshal(line, &rep); jerr == nil {
				c.mu.Lock()
				ch := c.pending[rep.ID]
				delete(c.pending, rep.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- rep
				}
			}
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.dead = fmt.Errorf("the plugin host exited (%v); it is started again on the next call", err)
	for id, ch := range c.pending {
		ch <- hostReply{ID: id, Error: c.dead.Error()}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// do sends one request and waits for its answer, ctx's deadline and
// cancellation travelling with it.
func (c *hostConn) do(ctx context.Context, req hostRequest) (hostReply, error) {
	ch := make(chan hostReply, 1)
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return hostReply{}, c.dead
	}
	c.nextID++
	req.ID = c.nextID
	c.pending[req.ID] = ch
	c.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		req.Deadline = max(time.Until(dl).Milliseconds(), 1)
	}
	if err := c.send(req); err != nil {
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		return hostReply{}, fmt.Errorf("plugin host: %w", err)
	}
	select {
	case rep := <-ch:
		if rep.Error != "" {
			return rep, errors.New(rep.Error)
		}
		return rep, nil
	case <-ctx.Done():
		_ = c.send(hostRequest{Op: "cancel", Of: req.ID})
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		return hostReply{}, ctx.Err()
	}
}

func (c *hostConn) send(req hostRequest) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.enc.Encode(req)
}

// close ends the host (it stops its plugins at end of input) and waits.
func (c *hostConn) close() error {
	c.rw.Close()
	err := c.wait()
	<-c.done
	return err
}

func (h *hostBackend) Tools(ctx context.Context) ([]Tool, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	rep, err := c.do(ctx, hostRequest{Op: "tools"})
	return rep.Tools, err
}

func (h *hostBackend) CallTool(ctx context.Context, ref ToolRef, args json.RawMessage) (*sdk.ToolResult, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	rep, err := c.do(ctx, hostRequest{Op: "call", Tool: ref.Name, Args: args})
	if err != nil {
		return nil, err
	}
	if rep.Result == nil {
		return nil, errors.New("plugin host: empty answer")
	}
	return rep.Result, nil
}

func (h *hostBackend) Dispatch(ctx context.Context, ev *sdk.Event, subs []Subscriber) *DispatchResult {
	c, err := h.get()
	if err != nil {
		return failedDispatch(ev.Name, subs, err)
	}
	rep, err := c.do(ctx, hostRequest{Op: "dispatch", Event: ev, Subs: subs})
	if err != nil || rep.Dispatch == nil {
		if err == nil {
			err = errors.New("plugin host: empty answer")
		}
		return failedDispatch(ev.Name, subs, err)
	}
	res := rep.Dispatch
	for i := range res.Outcomes {
		if o := &res.Outcomes[i]; o.Error != "" {
			o.Err = errors.New(o.Error)
		}
	}
	return res
}

func (h *hostBackend) Verify(ctx context.Context, name string) (*VerifyReport, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	rep, err := c.do(ctx, hostRequest{Op: "verify", Name: name})
	if err != nil {
		return nil, err
	}
	return rep.Verify, nil
}

func (h *hostBackend) Runtime(name string) Runtime {
	h.mu.Lock()
	c := h.conn
	h.mu.Unlock()
	if c == nil {
		return Runtime{State: StateStopped}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rep, err := c.do(ctx, hostRequest{Op: "runtime", Name: name})
	if err != nil {
		return Runtime{State: StateStopped, LastError: err.Error()}
	}
	return rep.Runtime[name]
}

func (h *hostBackend) Close() error {
	h.mu.Lock()
	h.closed = true
	c := h.conn
	h.conn = nil
	h.mu.Unlock()
	if c == nil {
		return nil
	}
	_ = c.close()
	return nil
}
