package lifecycle

import (
	"context"
	"strings"

	"github.com/nexus-harness/nexus/harness/gate"
)

// Plugins forwards an event to the plugins subscribed to it (cmd wires
// harness/pluginhost). Dispatch must return at once, starting nothing,
// when no plugin subscribed to the event.
type Plugins interface {
	Dispatch(ctx context.Context, ev Event) PluginReply
}

// PluginReply is what an event's subscribers said.
type PluginReply struct {
	// Denied (pre_tool_use only): a subscriber denied the call, or failed
	// under a fail-closed policy. DeniedBy names it, Reason is shown to the
	// agent.
	Denied   bool
	DeniedBy string
	Reason   string
	// Contexts are the subscribers' extra context for the agent, in order.
	Contexts []string
	// Failures describe calls that timed out, crashed or failed, each with
	// the policy applied; they are logged as warnings in nexus.log.
	Failures []string
}

// withPlugins runs the event's plugins after nexus's own handling. A tool
// call nexus's gate denied is not offered to them: the first denial wins,
// and nexus's gate comes first.
func (e *Engine) withPlugins(ctx context.Context, ev Event, r Reply) Reply {
	if ev.Name == PreToolUse && r.Decision == gate.Deny {
		return r
	}
	pr := e.o.Plugins.Dispatch(ctx, ev)
	for _, f := range pr.Failures {
		e.log.Log(ctx, "warn", ev.Name, ev.AgentID, f)
	}
	if ev.Name == PreToolUse && pr.Denied {
		if _, cl, err := e.classify(ctx, ev); err == nil {
			if err := e.appendToolLog(ctx, ev, cl, StatusDenied, pr.Reason); err != nil {
				e.log.Log(ctx, "warn", PreToolUse, ev.AgentID, "tool log: "+err.Error())
			}
		}
		e.log.Log(ctx, "debug", PreToolUse, ev.AgentID, "plugin "+pr.DeniedBy+" denied "+ev.Tool+": "+pr.Reason)
		return Reply{Decision: gate.Deny, Reason: pr.Reason}
	}
	if len(pr.Contexts) > 0 {
		parts := pr.Contexts
		if r.Context != "" {
			parts = append([]string{r.Context}, parts...)
		}
		r.Context = strings.Join(parts, "\n\n")
	}
	return r
}
