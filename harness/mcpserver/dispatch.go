package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// StdioOptions tune ServeStdioWith.
type StdioOptions struct {
	// Parallel names the tools whose calls may run beside other requests
	// (see ParallelTools). Every other request (initialize, tools/list,
	// nexus's own tools, ...) runs one at a time, in arrival order, as
	// before: nexus's state writes keep their order.
	Parallel func(tool string) bool
	// Workers bounds the parallel calls running at once (default 8); more
	// wait for a free worker.
	Workers int
}

// DefaultWorkers bounds the parallel tool calls of a stdio server.
const DefaultWorkers = 8

// ParallelTools reports the engine's plugin tools (their own result,
// served under their own name): each runs in a plugin process, bounded by
// its own deadline, and touches no nexus state file, so a slow one must
// not hold up the others or nexus's own tools.
func ParallelTools(e Engine) func(string) bool {
	names := map[string]bool{}
	for _, t := range e.Tools() {
		if t.Plugin != "" && t.Unprefixed {
			names[t.Name] = true
		}
	}
	return func(name string) bool { return names[name] }
}

// dispatcher runs the requests of a stdio server: the ones Parallel allows
// on a bounded set of workers, every other one on a single lane in arrival
// order. Answers go out as they are ready, matched by id. Each request runs
// under a context of its own, cancelled by the client's
// notifications/cancelled naming its id; a cancelled request is not
// answered (MCP: the receiver should not respond).
type dispatcher struct {
	s        *server.MCPServer
	w        *lineWriter
	parallel func(string) bool

	serial chan func()   // the in-order lane
	slots  chan struct{} // one per running parallel call
	wg     sync.WaitGroup

	mu        sync.Mutex
	running   map[string]*request // by id (JSON text)
	cancelled map[string]bool
}

// request is one request in flight, under its own context.
type request struct{ cancel context.CancelFunc }

// serialQueue bounds the requests waiting on the in-order lane; beyond it
// reading stops until one is done (the client is far ahead).
const serialQueue = 256

func newDispatcher(s *server.MCPServer, w *lineWriter, o StdioOptions) *dispatcher {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Parallel == nil {
		o.Parallel = func(string) bool { return false }
	}
	d := &dispatcher{s: s, w: w, parallel: o.Parallel, serial: make(chan func(), serialQueue),
		slots: make(chan struct{}, o.Workers), running: map[string]*request{}, cancelled: map[string]bool{}}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for job := range d.serial {
			job()
		}
	}()
	return d
}

// envelope is what the dispatcher reads of a message.
type envelope struct {
	Method *string         `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params struct {
		Name      string          `json:"name"`      // tools/call
		RequestID json.RawMessage `json:"requestId"` // notifications/cancelled
	} `json:"params"`
}

// dispatch takes one message off the wire. The edge (readMessage) reads
// it first: a message it refuses is answered on the in-order lane, and
// nothing decodes it. What the dispatcher cannot read goes to handle on
// the in-order lane, which answers with the protocol's error.
//
// release gives the message's share of the in-flight budget back; it is
// called once the message is answered (or needs no answer).
func (d *dispatcher) dispatch(ctx context.Context, line []byte, release func()) {
	m, refused := readMessage(bytes.TrimSpace(line))
	if refused != nil {
		d.serial <- func() {
			defer release()
			d.w.write(reply{*refused, m.id})
		}
		return
	}
	var env envelope
	if err := json.Unmarshal(m.body, &env); err != nil || env.Method == nil {
		env = envelope{}
	} else if *env.Method == string(mcp.MethodNotificationCancelled) {
		d.cancel(idKey(env.Params.RequestID))
		release()
		return
	}
	id := idKey(env.ID)
	rctx, cancel := context.WithCancel(ctx)
	req := &request{cancel: cancel}
	if id != "" {
		d.mu.Lock()
		// A client reusing the id of a request still in flight breaks
		// JSON-RPC; the first keeps the id for cancellation.
		if _, dup := d.running[id]; !dup {
			d.running[id] = req
		}
		d.mu.Unlock()
	}
	run := func() {
		defer release()
		defer d.done(id, req)
		if rctx.Err() != nil {
			return // cancelled while waiting
		}
		resp := handle(rctx, d.s, m)
		if resp == nil || d.wasCancelled(id) {
			return
		}
		d.w.write(resp)
	}
	if env.Method != nil && *env.Method == string(mcp.MethodToolsCall) && d.parallel(env.Params.Name) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			select {
			case d.slots <- struct{}{}:
			case <-rctx.Done():
				d.done(id, req)
				release()
				return
			}
			defer func() { <-d.slots }()
			run()
		}()
		return
	}
	d.serial <- run
}

// cancel ends the request with that id, if it is still running or waiting.
func (d *dispatcher) cancel(id string) {
	if id == "" {
		return
	}
	d.mu.Lock()
	req, ok := d.running[id]
	if ok {
		d.cancelled[id] = true
	}
	d.mu.Unlock()
	if ok {
		req.cancel()
	}
}

func (d *dispatcher) wasCancelled(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancelled[id]
}

func (d *dispatcher) done(id string, req *request) {
	req.cancel()
	if id == "" {
		return
	}
	d.mu.Lock()
	if d.running[id] == req {
		delete(d.running, id)
		delete(d.cancelled, id)
	}
	d.mu.Unlock()
}

// wait lets every accepted request finish (and its answer be written).
func (d *dispatcher) wait() {
	close(d.serial)
	d.wg.Wait()
}

// idKey is a request id as a map key: its compact JSON text ("" for none
// or null), so 7 and "7" stay different ids.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
