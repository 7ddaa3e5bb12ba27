package launch

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// errNotListed is the failure of a subscription the plugin itself does not
// list in its Info: it is not sent the event (a plugin that declares no
// subscription never gets one), and the subscription's policy applies, so a
// fail-closed guard that cannot see the call still denies it.
var errNotListed = fmt.Errorf("%w: its Info does not list this event, so it was not sent (remove the subscription from the manifest, or have the plugin list and handle the event)", sdk.ErrUnimplemented)

// Dispatch sends ev to subs one after another in that (Subscribers)
// order, each call bounded by its subscription's timeout (and by ctx). For
// pre_tool_use the first denial, or a fail-closed failure, decides and the
// remaining subscribers are not called. Other events are observed only:
// denials are ignored and every subscriber runs. Failures are logged with
// the policy applied. Plugins that are not subscribed are never started.
func (m *Manager) Dispatch(ctx context.Context, ev *sdk.Event, subs []pluginhost.Subscriber) *pluginhost.DispatchResult {
	res := &pluginhost.DispatchResult{}
	if ev == nil {
		return res
	}
	// Start every subscriber now, in parallel, so a second plugin's
	// launch overlaps the first one's call. Calls still run in order.
	if len(subs) > 1 {
		for _, s := range subs {
			m.procs[s.Plugin].kick()
		}
	}
	decides := ev.Name == sdk.EventPreToolUse
	for _, s := range subs {
		p := m.procs[s.Plugin]
		t0 := time.Now()
		var reply *sdk.EventReply
		err := p.do(ctx, s.Timeout, "event "+string(ev.Name), func(ctx context.Context, inst *instance) error {
			if !slices.Contains(inst.info.Events, ev.Name) {
				return errNotListed
			}
			var err error
			reply, err = inst.rpc.HandleEvent(ctx, ev)
			return err
		})
		o := pluginhost.Outcome{Plugin: s.Plugin, Duration: time.Since(t0)}
		if err != nil {
			o.Err, o.Error, o.Policy = err, err.Error(), s.OnFailure
			res.Outcomes = append(res.Outcomes, o)
			if decides && s.OnFailure == pluginhost.FailClosed {
				m.log.Warn("plugin hook failed; denying the tool call (fail-closed)", "plugin", s.Plugin, "event", ev.Name, "tool", ev.ToolName, "error", err)
				res.Denied, res.DeniedBy = true, s.Plugin
				res.Reason = pluginhost.FailClosedReason(s.Plugin, err)
				return res
			}
			m.log.Warn("plugin hook failed; continuing", "plugin", s.Plugin, "event", ev.Name, "policy", s.OnFailure, "error", err)
			continue
		}
		if reply != nil {
			o.Context = reply.Context
			if reply.Context != "" {
				res.Contexts = append(res.Contexts, reply.Context)
			}
			if reply.Deny && decides {
				o.Denied, o.Reason = true, reply.Reason
				if o.Reason == "" {
					o.Reason = "denied by plugin " + s.Plugin
				}
				res.Outcomes = append(res.Outcomes, o)
				res.Denied, res.DeniedBy, res.Reason = true, s.Plugin, o.Reason
				return res
			}
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	return res
}
