package hot

import (
	"context"
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
// (host.Runner, with nexus's failure policy). Its only error is a usage
// error (an unknown host): every other problem is the runner's to report.
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
			if r, err := s.root(); err == nil {
				r.LogWithoutEngine(ctx, event, ev.AgentID, msg)
			}
		},
		Stderr: stderr,
	}
	r.Run(ctx, stdin, stdout)
	return nil
}

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
		return nil, err
	}
	if hs.MemoryErr != nil {
		hs.Lifecycle.Log().Log(ctx, "warn", ev.Name, ev.AgentID, "memory features are off: "+hs.MemoryErr.Error())
	}
	return hs.Lifecycle, nil
}

// policy is gate.policy of this command line's configuration; without
// one, NEXUS_GATE_POLICY.
func (s *hookSession) policy() string {
	r, err := s.root()
	if err != nil {
		return os.Getenv(config.EnvName("gate.policy"))
	}
	return r.GatePolicy()
}
