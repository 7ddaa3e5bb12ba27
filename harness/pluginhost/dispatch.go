package pluginhost

import (
	"context"
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
		man := m.byName[n]
		s, ok := man.Events[event]
		if !ok {
			continue
		}
		if isToolEvent(event) && !s.Matches(toolName) {
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
// the policy applied. Plugins that are not subscribed are never started;
// with no subscriber at all, nothing is.
func (m *Manager) Dispatch(ctx context.Context, ev *sdk.Event) *DispatchResult {
	res := &DispatchResult{}
	if ev == nil {
		return res
	}
	subs := m.Subscribers(string(ev.Name), ev.ToolName)
	if len(subs) == 0 {
		return res
	}
	b, err := m.getBackend()
	if err != nil {
		return failedDispatch(ev.Name, subs, err)
	}
	return b.Dispatch(ctx, ev, subs)
}

// failedDispatch is the result when no subscriber could be asked at all:
// each one's policy applies to the failure.
func failedDispatch(event sdk.EventName, subs []Subscriber, err error) *DispatchResult {
	res := &DispatchResult{}
	for _, s := range subs {
		o := Outcome{Plugin: s.Plugin, Err: err, Error: err.Error(), Policy: s.OnFailure}
		res.Outcomes = append(res.Outcomes, o)
		if event == sdk.EventPreToolUse && s.OnFailure == FailClosed {
			res.Denied, res.DeniedBy = true, s.Plugin
			res.Reason = FailClosedReason(s.Plugin, err)
			return res
		}
	}
	return res
}

// FailClosedReason is the denial a fail-closed subscriber's failure gives.
func FailClosedReason(plugin string, err error) string {
	return "plugin " + plugin + " could not check this call and its policy is fail-closed: " + err.Error()
}
