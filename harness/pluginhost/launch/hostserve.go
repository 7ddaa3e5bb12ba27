package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// ServeHost is the plugin host side of pluginhost's default Backend: it
// reads requests from in (one JSON object per line: first "open" with the
// manifests and options, then "tools", "call", "dispatch", "verify",
// "runtime" and "cancel"), runs the plugins in this process and writes one
// answer per request to out, possibly out of order. At the end of in it
// stops every plugin and returns. base supplies what does not travel (the
// logger).
func ServeHost(ctx context.Context, in io.Reader, out io.Writer, base pluginhost.Options) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	h := &hostServer{enc: json.NewEncoder(out), running: map[int64]context.CancelFunc{}}
	r := bufio.NewReaderSize(in, 64<<10)
	var wg sync.WaitGroup
	defer func() {
		cancelAll()
		wg.Wait()
		if h.m != nil {
			h.m.Close()
		}
	}()
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var req pluginhost.HostRequest
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				h.reply(pluginhost.HostReply{Error: "malformed request: " + jerr.Error()})
			} else {
				switch req.Op {
				case "open":
					h.open(req, base)
				case "cancel":
					h.cancel(req.Of)
				default:
					rctx, cancel := context.WithCancel(ctx)
					if req.Deadline > 0 {
						rctx, cancel = context.WithTimeout(ctx, time.Duration(req.Deadline)*time.Millisecond)
					}
					h.track(req.ID, cancel)
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer h.done(req.ID)
						h.reply(h.handle(rctx, req))
					}()
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

type hostServer struct {
	m *pluginhost.Manager

	wmu sync.Mutex
	enc *json.Encoder

	mu      sync.Mutex
	running map[int64]context.CancelFunc
}

func (h *hostServer) reply(rep pluginhost.HostReply) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_ = h.enc.Encode(rep)
}

func (h *hostServer) track(id int64, cancel context.CancelFunc) {
	h.mu.Lock()
	h.running[id] = cancel
	h.mu.Unlock()
}

func (h *hostServer) done(id int64) {
	h.mu.Lock()
	cancel := h.running[id]
	delete(h.running, id)
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (h *hostServer) cancel(id int64) {
	h.mu.Lock()
	cancel := h.running[id]
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// open builds the manager over the manifests the nexus process found (they
// are not discovered again).
func (h *hostServer) open(req pluginhost.HostRequest, base pluginhost.Options) {
	if h.m != nil {
		h.reply(pluginhost.HostReply{ID: req.ID, Error: "already open"})
		return
	}
	opts := base
	if req.Options != nil {
		opts = req.Options.Apply(base)
	}
	opts.Backend = Backend
	var mans []*pluginhost.Manifest
	for _, w := range req.Manifests {
		if w != nil && w.Manifest != nil {
			mans = append(mans, w.Unwrap())
		}
	}
	m, err := pluginhost.New(mans, opts)
	if err != nil {
		h.reply(pluginhost.HostReply{ID: req.ID, Error: err.Error()})
		return
	}
	h.m = m
	h.reply(pluginhost.HostReply{ID: req.ID})
}

func (h *hostServer) handle(ctx context.Context, req pluginhost.HostRequest) pluginhost.HostReply {
	rep := pluginhost.HostReply{ID: req.ID}
	if h.m == nil {
		rep.Error = "the plugin host was not opened"
		return rep
	}
	var err error
	switch req.Op {
	case "tools":
		rep.Tools, err = h.m.Tools(ctx)
	case "call":
		rep.Result, err = h.m.CallTool(ctx, req.Tool, req.Args)
	case "dispatch":
		rep.Dispatch = h.m.Dispatch(ctx, req.Event)
	case "verify":
		rep.Verify, err = h.m.Verify(ctx, req.Name)
	case "runtime":
		rep.Runtime = map[string]pluginhost.Runtime{}
		if b := h.m.Backend(); b != nil {
			rep.Runtime[req.Name] = b.Runtime(req.Name)
		}
	default:
		err = errors.New("unknown request " + req.Op)
	}
	if err != nil {
		rep.Error = err.Error()
	}
	return rep
}
