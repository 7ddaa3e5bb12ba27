package hot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
)

// Hook is `nexus hook`: it reads one lifecycle event of the host from
// stdin, runs the lifecycle engine and writes the host's reply on stdout
// (host.Runner, with nexus's failure policy). Its only errors are a usage
// error (an unknown host) and, in the front, *ErrFull: every other problem
// is the runner's to report.
func Hook(ctx context.Context, g Globals, a HookArgs, stdin io.Reader, stdout, stderr io.Writer) error {
	h, err := hosts.Lookup(a.Host)
	if err != nil {
		return Usagef("%v", err)
	}
	if a.Plugin {
		a.Variant = "plugin"
	}
	s := &hookSession{g: g, h: h, variant: a.Variant}
	r := host.Runner{
		Codec:  h.Codec(),
		Event:  a.Event,
		Engine: s.engine,
		Policy: s.policy,
		FallbackLog: func(ctx context.Context, event string, ev lifecycle.Event, msg string) {
			s.project(ev)
			r, err := s.root()
			if err != nil || s.resolve(r) != nil {
				return // nexus-full handles this event, when unresolved
			}
			r.LogWithoutEngine(ctx, event, ev.AgentID, msg)
		},
		Stderr: stderr,
	}
	if srv, ok := h.(host.Server); ok {
		if g.Front {
			// A host that keeps nexus running (OpenCode's --serve) pays
			// the start once per session: nexus-full serves it, with
			// stdin untouched.
			return &ErrFull{}
		}
		if err := srv.ServeHooks(ctx, stdin, stdout, r, a.Serve); err != nil {
			fmt.Fprintf(stderr, "nexus hook: %v\n", err)
		}
		return nil
	}
	if a.Serve {
		return Usagef("--serve: the %s host sends one event per invocation", h.Name())
	}
	if !g.Front {
		r.Run(ctx, stdin, stdout)
		return nil
	}
	// The front: the reply and any message are held until it is known
	// that this program could resolve the configuration.
	data, err := io.ReadAll(io.LimitReader(stdin, host.MaxPayload+1))
	if err != nil {
		r.Run(ctx, io.MultiReader(bytes.NewReader(data), errReader{err}), stdout)
		return nil
	}
	var errs bytes.Buffer
	r.Stderr = &errs
	out := r.Handle(ctx, data)
	if s.unresolved {
		return &ErrFull{Stdin: data}
	}
	if len(out) > 0 {
		_, _ = stdout.Write(out)
	}
	_, _ = stderr.Write(errs.Bytes())
	return nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// hookSession is one hook invocation's composition root, built once the
// event says which project it belongs to.
type hookSession struct {
	g       Globals
	h       host.Host
	variant string

	once  sync.Once
	built bool
	r     *compose.Root
	err   error
	// unresolved: the front found no resolution of the configuration
	// (config.ErrUnresolved); nexus-full handles the event.
	unresolved bool
}

// project picks the project the event belongs to when --project is not
// given (compose.HookProject), before the composition root is built.
func (s *hookSession) project(ev lifecycle.Event) {
	if s.g.Project != "" || s.built {
		return
	}
	if p := compose.HookProject(s.h, os.Getenv, ev.Dir); p != "" {
		s.g.Project = p
	}
}

// root builds the composition root for the host: the distribution's
// manifest is decoded when an event first asks it a question.
func (s *hookSession) root() (*compose.Root, error) {
	s.once.Do(func() {
		s.built = true
		o, err := ComposeOptions(s.g)
		if err != nil {
			s.err = err
			return
		}
		o.LazyCore, o.Host, o.HostEnv.Variant = true, s.h, s.variant
		// The session shows the configuration's problems (the
		// lifecycle's notice); a file that does not load is left out,
		// never nexus.
		o.KeepGoing, o.Warn = true, nil
		s.r = compose.New(o)
	})
	return s.r, s.err
}

// engine builds the lifecycle engine for the event's project (the harness
// with its plugins reached per event): configuration and the
// distribution's manifest are loaded once; schemas compile only when a
// handler writes a state file that has one.
func (s *hookSession) engine(ctx context.Context, ev lifecycle.Event) (*lifecycle.Engine, error) {
	s.project(ev)
	r, err := s.root()
	if err != nil {
		return nil, err
	}
	hs, err := r.Harness(ctx, compose.HarnessOptions{Plugins: compose.PluginsForHook})
	if err != nil {
		s.unresolved = s.unresolved || unresolved(err)
		return nil, err
	}
	if hs.MemoryErr != nil {
		hs.Lifecycle.Log().Log(ctx, "warn", ev.Name, ev.AgentID, "memory features are off: "+hs.MemoryErr.Error())
	}
	return hs.Lifecycle, nil
}

// resolve loads r's configuration and reports when this program could not
// resolve it (the front without a cached resolution): nexus-full must
// handle the event. Any other configuration error is the engine's to
// report, as before.
func (s *hookSession) resolve(r *compose.Root) error {
	if _, err := r.Config(); unresolved(err) {
		s.unresolved = true
		return err
	}
	return nil
}

// policy is gate.policy of this command line's configuration; without
// one, NEXUS_GATE_POLICY.
func (s *hookSession) policy() string {
	r, err := s.root()
	if err != nil {
		return os.Getenv(config.EnvName("gate.policy"))
	}
	_ = s.resolve(r)
	return r.GatePolicy()
}
