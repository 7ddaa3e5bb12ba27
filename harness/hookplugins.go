package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// HookPlugins hands a hook's event to the plugins subscribed to it
// (lifecycle.Plugins).
//
// The hot path first skims the manifests (name and subscriptions only:
// pluginhost.Subscribed); with no subscriber it returns at once, having
// validated nothing, compiled nothing and started nothing. With
// subscribers it asks the project's hook server, which keeps them warm;
// when there is none it starts one (detached) for the next hooks and
// handles this event in-process, as it does when the server does not
// answer.
type HookPlugins struct {
	// Options are the project's plugin options (read when an event comes).
	Options func() (pluginhost.Options, error)
	// Complete, when set, finishes the options once an event has
	// subscribers: it finds the plugin host program, a lookup every other
	// hook is spared.
	Complete func(*pluginhost.Options)
	// HookServer says whether a warm hook server may serve the events
	// (plugins.hook_server).
	HookServer func() bool
	// Spawn starts the project's hook server, detached; nil never does.
	Spawn func(hostProgram, project, dir string) error
}

// Dispatch implements lifecycle.Plugins.
func (h *HookPlugins) Dispatch(ctx context.Context, ev lifecycle.Event) lifecycle.PluginReply {
	o, err := h.Options()
	if err != nil {
		return lifecycle.PluginReply{Failures: []string{"plugins: " + err.Error()}}
	}
	tool := ""
	if ev.Name == lifecycle.PreToolUse || ev.Name == lifecycle.PostToolUse {
		tool = ev.Tool
	}
	subs, budget := pluginhost.Subscribed(o, ev.Name, tool)
	if len(subs) == 0 {
		return lifecycle.PluginReply{}
	}
	if h.Complete != nil {
		h.Complete(&o)
	}
	sev, err := PluginEvent(ev)
	if err != nil {
		return lifecycle.PluginReply{Failures: []string{"plugins: " + err.Error()}}
	}
	var notes []string
	res, err := h.viaServer(ctx, o, sev, budget)
	if err != nil {
		if !errors.Is(err, pluginhost.ErrNoHookServer) {
			notes = append(notes, "plugins: the hook server did not answer ("+err.Error()+"); this event was handled in-process")
		}
		res = h.inProcess(ctx, o, ev.Name, tool, sev)
	}
	return PluginReply(res, ev.Name, notes)
}

// viaServer asks the project's hook server, and starts one when none runs.
func (h *HookPlugins) viaServer(ctx context.Context, o pluginhost.Options, ev *sdk.Event, budget time.Duration) (*pluginhost.DispatchResult, error) {
	if h.HookServer == nil || !h.HookServer() || o.HostProgram == "" {
		return nil, pluginhost.ErrNoHookServer // in-process (which reports a missing plugin host)
	}
	dir, err := pluginhost.RuntimeDir(o.ProjectDir)
	if err != nil {
		return nil, err
	}
	// The server is the plugin host program; one of another build steps down.
	res, err := pluginhost.DispatchViaServer(ctx, dir, o, ev, pluginhost.ProgramIdentity(o.HostProgram), budget)
	if errors.Is(err, pluginhost.ErrNoHookServer) && h.Spawn != nil {
		if serr := h.Spawn(o.HostProgram, o.ProjectDir, dir); serr != nil {
			return nil, fmt.Errorf("start the hook server: %w", serr)
		}
	}
	return res, err
}

// inProcess starts the subscribed plugins for this hook alone (through a
// plugin host of its own), dispatches, and stops them. Only the subscribed
// manifests are validated.
func (h *HookPlugins) inProcess(ctx context.Context, o pluginhost.Options, event, tool string, ev *sdk.Event) *pluginhost.DispatchResult {
	o.OnlyEvent, o.OnlyTool = event, tool
	o.Logger = pluginhost.NopLogger{} // failures reach nexus.log through the reply
	m, err := pluginhost.Open(o)
	if err != nil {
		return &pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{{Plugin: "(plugins)", Err: err, Error: err.Error(), Policy: pluginhost.FailOpen}}}
	}
	stop := m.ShutdownOnSignal()
	defer stop()
	defer m.Close()
	res := m.Dispatch(ctx, ev)
	for _, p := range m.Problems() {
		label := "(manifest)"
		if p.Tool != "" {
			label = "(refused)" // one tool refused for its name; the plugin runs
		}
		res.Outcomes = append(res.Outcomes, pluginhost.Outcome{Plugin: label, Err: p, Error: p.Error(), Policy: pluginhost.FailOpen})
	}
	return res
}
