package harness

// The rules of the plugins' side of a hook: what a plugin is shown of an
// event, and what its answer or failure does to the event.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// PluginReply turns a plugin dispatch result into the lifecycle's terms:
// a fail-closed plugin that fails on PreToolUse denies the call, every
// other failure lets the event proceed, and each failure becomes a line
// for nexus.log naming the plugin and the policy. notes come first.
func PluginReply(res *pluginhost.DispatchResult, event string, notes []string) lifecycle.PluginReply {
	r := lifecycle.PluginReply{Denied: res.Denied, DeniedBy: res.DeniedBy, Reason: res.Reason, Contexts: res.Contexts, Failures: notes}
	for _, o := range res.Outcomes {
		if o.Error == "" {
			continue
		}
		what := "the event proceeds"
		switch {
		case o.Plugin == "(refused)":
			r.Failures = append(r.Failures, "refused: "+o.Error)
			continue
		case strings.HasPrefix(o.Plugin, "("):
			r.Failures = append(r.Failures, "plugin not loaded: "+o.Error)
			continue
		case o.Policy == pluginhost.FailClosed && event == lifecycle.PreToolUse:
			what = "the tool call is denied"
		case event == lifecycle.PreToolUse:
		default:
			what = "observed only"
		}
		r.Failures = append(r.Failures, fmt.Sprintf("plugin %s failed on %s (%s: %s): %s", o.Plugin, event, o.Policy, what, o.Error))
	}
	return r
}

// PluginEvent is what plugins see of an event: the event's own fields,
// never more of the project.
func PluginEvent(ev lifecycle.Event) (*sdk.Event, error) {
	out := &sdk.Event{Name: sdk.EventName(ev.Name), SessionID: ev.SessionID, AgentID: ev.AgentID, AgentName: ev.Role(), ToolName: ev.Tool, Prompt: ev.Prompt}
	if ev.ToolInput != nil {
		b, err := json.Marshal(ev.ToolInput)
		if err != nil {
			return nil, fmt.Errorf("encode the tool input for plugins: %w", err)
		}
		out.ToolInput = b
	}
	payload := map[string]any{}
	for k, v := range map[string]string{"cwd": ev.Dir, "agent_type": ev.AgentType, "source": ev.Source, "status": ev.Status, "error": ev.Error} {
		if v != "" {
			payload[k] = v
		}
	}
	if ev.LastMessage != nil {
		payload["last_message"] = *ev.LastMessage
	}
	if ev.FilesTouched != nil {
		payload["files_touched"] = ev.FilesTouched
	}
	if len(ev.ToolClasses) > 0 {
		payload["tool_classes"] = ev.ToolClasses
	}
	if len(payload) > 0 {
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, err
		}
		out.Payload = b
	}
	return out, nil
}
