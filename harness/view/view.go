// Package view is `nexus view`: a local, read-only web page of one
// project's state (plan, task graph, every host's agents, decisions,
// memory) that follows the state live. The server reads through the state
// store's bounded readers and never writes; it listens on loopback only,
// admits a browser that opened the address printed with its per-run token
// (then an HttpOnly, SameSite=Strict cookie), and checks Host and Origin
// like the HTTP MCP transport. File change notifications (watch.go) tell
// the page, over server-sent events, which section changed.
package view

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/harness/mcpserver"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/memory"
)

// Memory is what the page needs of the memory lifecycle (*memory.Manager):
// the gc report, which changes nothing, and each note's category.
type Memory interface {
	Report(ctx context.Context) (*memory.Report, error)
	CategoryOf(file string) string
}

// HistorySearch answers a history search as nx_history_search does
// (tools.SearchHistory).
type HistorySearch func(st *state.Store, query string, lastN int64) (map[string]any, error)

// Options are the server's dependencies.
type Options struct {
	// Layout is the project's state layout under this nexus's harness id;
	// the trackers and access logs of every harness id under state/ are
	// shown too.
	Layout state.Layout
	// Memory gives the gc report; nil shows MemoryErr (or "not
	// available") in the memory view.
	Memory    Memory
	MemoryErr error
	// Decisions reaches the decision store; nil when it is turned off.
	Decisions Decisions
	// History searches history.json (required).
	History HistorySearch
	// Log receives what the server has to say (nil: discarded).
	Log *log.Logger
	// Debounce is how long a burst of file changes may go quiet before
	// the sections it touched are rebuilt (default 25 ms); a burst is
	// never held longer than 4 times that.
	Debounce time.Duration
	// Token is the per-run token; "" generates one.
	Token string
}

// Server serves one project's view.
type Server struct {
	o     Options
	store *state.Store
	token string

	sections map[string]*section
	events   *broker

	mu       sync.Mutex
	port     string // the port bound, for the Host and Origin checks
	watching map[string]bool
	watcher  *watcher
}

// New returns a server for o; nothing is read yet.
func New(o Options) (*Server, error) {
	if o.History == nil {
		return nil, errors.New("view: no history search")
	}
	if o.Log == nil {
		o.Log = log.New(discard{}, "", 0)
	}
	if o.Debounce <= 0 {
		o.Debounce = 25 * time.Millisecond
	}
	tok := o.Token
	if tok == "" {
		var err error
		if tok, err = mcpserver.NewToken(); err != nil {
			return nil, err
		}
	}
	if len(tok) < 16 {
		return nil, errors.New("view: the token is too short (at least 16 characters)")
	}
	s := &Server{o: o, store: state.New(o.Layout, nil), token: tok, events: newBroker(), watching: map[string]bool{}}
	s.sections = map[string]*section{
		secPlan:      {name: secPlan, build: s.buildPlan},
		secTasks:     {name: secTasks, build: s.buildTasks},
		secAgents:    {name: secAgents, build: s.buildAgents},
		secHistory:   {name: secHistory, build: s.buildHistory},
		secMemory:    {name: secMemory, build: s.buildMemory},
		secDecisions: {name: secDecisions, build: s.buildDecisions},
	}
	for _, sec := range s.sections {
		sec.ready = make(chan struct{})
		sec.onChange = s.changed
	}
	return s, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Token is the per-run token the printed address carries.
func (s *Server) Token() string { return s.token }

// Serve listens on addr (loopback only), builds every section, watches
// the state and serves until ctx ends; ready receives the address to open
// (with the token) once the server accepts connections.
func (s *Server) Serve(ctx context.Context, addr string, ready func(url string)) error {
	addr, err := mcpserver.ListenAddr(addr)
	if err != nil {
		return err
	}
	if mcpserver.Exposed(addr) {
		return fmt.Errorf("%s is not a loopback address: nexus view serves this machine only (use 127.0.0.1, ::1 or localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.mu.Lock()
	s.port = port
	s.mu.Unlock()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w, err := newWatcher(s)
	if err != nil {
		// The page still works, without live updates: say so.
		s.o.Log.Printf("no file change notification (%v): the page will not update by itself; reload it to see changes", err)
	} else {
		s.mu.Lock()
		s.watcher = w
		s.mu.Unlock()
		defer w.close()
		go w.run(ctx)
	}
	for _, name := range sectionNames {
		go s.sections[name].refresh(ctx)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(fmt.Sprintf("http://%s/?token=%s", ln.Addr().String(), s.token))
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The event streams end with ctx (their requests' base context).
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down the view server: %w", err)
	}
	return nil
}

// changed tells every open page that a section has a new version.
func (s *Server) changed(name string, version uint64) {
	s.events.publish(event{Section: name, Version: version})
}

// section is one part of the page, built from the files it reads and
// rebuilt when they change. Readers get the latest complete build.
type section struct {
	name     string
	build    func(context.Context) (any, error)
	onChange func(string, uint64)

	mu      sync.RWMutex
	value   any
	err     error
	version uint64
	hash    uint64
	built   bool
	ready   chan struct{} // closed after the first build

	runMu   sync.Mutex
	running bool
	again   bool
}

var hashSeed = maphash.MakeSeed()

// refresh rebuilds the section; a refresh asked for while one runs makes
// that one run again once it ends, so bursts coalesce and the last change
// is never missed.
func (c *section) refresh(ctx context.Context) {
	c.runMu.Lock()
	if c.running {
		c.again = true
		c.runMu.Unlock()
		return
	}
	c.running = true
	c.runMu.Unlock()
	for {
		c.rebuild(ctx)
		c.runMu.Lock()
		if !c.again || ctx.Err() != nil {
			c.running = false
			c.runMu.Unlock()
			return
		}
		c.again = false
		c.runMu.Unlock()
	}
}

func (c *section) rebuild(ctx context.Context) {
	v, err := c.build(ctx)
	// The version changes only when what the page would show changes: a
	// rewrite with the same content (or a lock file's churn) tells no
	// page anything.
	var h maphash.Hash
	h.SetSeed(hashSeed)
	if err != nil {
		h.WriteString("error: " + err.Error())
	} else if hv, ok := v.(interface{ hashInto(*maphash.Hash) }); ok {
		hv.hashInto(&h)
	} else {
		json.NewEncoder(&h).Encode(v)
	}
	sum := h.Sum64()
	c.mu.Lock()
	first := !c.built
	changed := first || sum != c.hash
	if changed {
		c.value, c.err, c.hash = v, err, sum
		c.version++
	}
	c.built = true
	version := c.version
	c.mu.Unlock()
	if first {
		close(c.ready)
	}
	if changed && !first && c.onChange != nil {
		c.onChange(c.name, version)
	}
}

// get waits for the first build (or ctx) and returns the latest.
func (c *section) get(ctx context.Context) (any, uint64, error) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.value, c.version, c.err
}

// versions returns every built section's version.
func (s *Server) versions() map[string]uint64 {
	out := make(map[string]uint64, len(s.sections))
	for name, c := range s.sections {
		c.mu.RLock()
		if c.built {
			out[name] = c.version
		}
		c.mu.RUnlock()
	}
	return out
}

// dirty rebuilds the named sections (the watcher calls it after a burst).
func (s *Server) dirty(ctx context.Context, names map[string]bool) {
	for name := range names {
		if c := s.sections[name]; c != nil {
			go c.refresh(ctx)
		}
	}
}
