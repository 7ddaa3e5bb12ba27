package pluginhost

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Subscriber is one plugin's subscription to an event, as declared.
type Subscriber struct {
	Plugin    string        `json:"plugin"`
	Priority  int           `json:"priority"`
	Timeout   time.Duration `json:"timeout"`
	OnFailure FailurePolicy `json:"on_failure"`
}

// Subscribers lists the plugins subscribed to event for a call of toolName
// (ignored for events without a tool), in dispatch order: higher priority
// first, then plugin name. It reads manifests only; nothing is started, so
// a hook process can ask it for free.
func (m *Manager) Subscribers(event, toolName string) []Subscriber {
	var out []Subscriber
	for _, n := range m.names {
		man := m.procs[n].man
		s, ok := man.Events[event]
		if !ok {
			continue
		}
		if (event == sdk.EventPreToolUse || event == sdk.EventPostToolUse) && !s.Matches(toolName) {
			continue
		}
		out = append(out, Subscriber{Plugin: n, Priority: man.Priority, Timeout: time.Duration(s.Timeout), OnFailure: s.OnFailure})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		return out[i].Plugin < out[j].Plugin
	})
	return out
}

// Outcome is what one subscriber did with an event.
type Outcome struct {
	Plugin   string        `json:"plugin"`
	Duration time.Duration `json:"duration"`
	Denied   bool          `json:"denied,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Context  string        `json:"context,omitempty"`
	// Err is set when the call timed out, crashed or failed; Policy then
	// says what that meant.
	Err    error         `json:"-"`
	Error  string        `json:"error,omitempty"` // Err's text, for the wire and logs
	Policy FailurePolicy `json:"policy,omitempty"`
}

// DispatchResult is the combined answer of an event's subscribers.
type DispatchResult struct {
	// Denied is set only for pre_tool_use: a subscriber denied the call, or
	// failed with a fail-closed policy. DeniedBy names it; Reason is its
	// reason (or the failure).
	Denied   bool   `json:"denied"`
	DeniedBy string `json:"denied_by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Contexts are the subscribers' extra context for the agent, in order.
	Contexts []string `json:"contexts,omitempty"`
	// Outcomes has one entry per subscriber called, in order.
	Outcomes []Outcome `json:"outcomes"`
}

// Dispatch sends ev to its subscribers one after another in Subscribers
// order, each call bounded by its subscription's timeout (and by ctx). For
// pre_tool_use the first denial, or a fail-closed failure, decides and the
// remaining subscribers are not called. Other events are observed only:
// denials are ignored and every subscriber runs. Failures are logged with
// the policy applied. Plugins that are not subscribed are never started.
func (m *Manager) Dispatch(ctx context.Context, ev *sdk.Event) *DispatchResult {
	res := &DispatchResult{}
	if ev == nil {
		return res
	}
	subs := m.Subscribers(ev.Name, ev.ToolName)
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
		err := p.do(ctx, s.Timeout, "event "+ev.Name, func(ctx context.Context, inst *instance) error {
			var err error
			reply, err = inst.rpc.HandleEvent(ctx, ev)
			return err
		})
		o := Outcome{Plugin: s.Plugin, Duration: time.Since(t0)}
		if err != nil {
			o.Err, o.Error, o.Policy = err, err.Error(), s.OnFailure
			res.Outcomes = append(res.Outcomes, o)
			if decides && s.OnFailure == FailClosed {
				m.log.Warn("plugin hook failed; denying the tool call (fail-closed)", "plugin", s.Plugin, "event", ev.Name, "tool", ev.ToolName, "error", err)
				res.Denied, res.DeniedBy = true, s.Plugin
				res.Reason = fmt.Sprintf("plugin %s could not check this call and its policy is fail-closed: %v", s.Plugin, err)
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
