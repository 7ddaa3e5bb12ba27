package opencode

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// ServeHooks implements host.Server: the plugin's requests on in, the
// replies on out. With serve (the long-lived child the plugin starts for
// an OpenCode process) it answers until in ends, with one engine for the
// project built on the first request and the session record kept in
// memory as well as on disk, so an event costs only its own work: the
// configuration and the distribution are read once, when the child
// starts (a change to them takes effect in the next OpenCode process).
// Without serve it answers the first request (the one process per hook
// the plugin falls back to).
//
// Failures follow nexus's policy (harness/host) per request, and are
// written to r.Stderr and nexus.log: a request nexus cannot read, or a tool
// call with no engine to check it (the configuration or distribution does
// not load), is refused on the tool gate whatever gate.policy says; nexus
// failing while it handles one (an engine error, a panic) refuses it when
// gate.policy is fail-closed. Other hooks go on unchanged.
func (Host) ServeHooks(ctx context.Context, in io.Reader, out io.Writer, r host.Runner, serve bool) error {
	s := &server{r: r}
	if s.r.Stderr == nil {
		s.r.Stderr = io.Discard
	}
	if serve {
		return Serve(ctx, in, out, s.handle)
	}
	return ServeOne(ctx, in, out, s.handle)
}

// server answers requests for one nexus process. Serve asks it one
// request at a time.
type server struct {
	r host.Runner

	built  bool
	engine *lifecycle.Engine
	err    error
	codec  *Codec
}

// failure is what kind of failure a request met (harness/host's policy).
type failure int

const (
	failed     failure = iota // nexus failed while handling: gate.policy decides
	unreadable                // the request could not be read: the gate refuses
	unjudged                  // no engine to check with: the gate refuses
)

// engineFor builds the project's engine on the first request (its dir
// names the project when the command line does not) and keeps it, or why
// it could not be built.
func (s *server) engineFor(ctx context.Context, req Request) (*lifecycle.Engine, error) {
	if !s.built {
		s.built = true
		s.engine, s.err = s.r.Engine(ctx, lifecycle.Event{Dir: req.Dir})
		switch {
		case s.err != nil:
			s.engine = nil
		case s.engine == nil:
			s.err = errors.New("no lifecycle engine was built")
		default:
			s.codec = NewCodec(StateStore{S: s.engine.Store()})
		}
	}
	return s.engine, s.err
}

func (s *server) handle(ctx context.Context, req Request) (rep Reply, _ error) {
	var ev lifecycle.Event
	defer func() {
		if p := recover(); p != nil {
			rep = s.fail(ctx, req, ev, fmt.Errorf("internal error: %v", p), failed)
		}
	}()
	ev.Dir = req.Dir
	eng, err := s.engineFor(ctx, req)
	if err != nil {
		return s.fail(ctx, req, ev, err, unjudged), nil
	}
	rep, err = s.codec.Handle(ctx, req, func(ctx context.Context, e lifecycle.Event) (lifecycle.Reply, error) {
		ev = e
		return eng.Handle(ctx, e)
	})
	if err != nil {
		kind := failed
		var ie *InputError
		if errors.As(err, &ie) {
			kind = unreadable
		}
		return s.fail(ctx, req, ev, err, kind), nil
	}
	return rep, nil
}

// fail reports a failure (stderr, nexus.log) and returns the reply the
// policy gives it.
func (s *server) fail(ctx context.Context, req Request, ev lifecycle.Event, err error, kind failure) Reply {
	msg := oneLine(err.Error())
	fmt.Fprintf(s.r.Stderr, "nexus hook: %s\n", msg)
	label := ev.Name
	if label == "" {
		label = req.Hook
	}
	switch {
	case s.engine != nil:
		s.engine.Log().Log(ctx, "error", label, ev.AgentID, msg)
	case s.r.FallbackLog != nil:
		s.r.FallbackLog(ctx, label, ev, msg)
	}
	switch {
	case kind == unreadable:
		return Unreadable(req, msg)
	case kind == unjudged:
		return Unjudged(req, msg)
	case s.r.Policy != nil && s.r.Policy() == "fail-closed":
		return FailClosed(req, msg)
	}
	return Reply{ID: req.ID}
}
