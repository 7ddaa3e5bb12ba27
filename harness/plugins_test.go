package harness

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/pluginhost"
)

func TestPluginReply(t *testing.T) {
	fail := func(plugin string, p pluginhost.FailurePolicy) pluginhost.Outcome {
		return pluginhost.Outcome{Plugin: plugin, Error: "timed out", Policy: p}
	}
	tests := []struct {
		name  string
		event string
		res   pluginhost.DispatchResult
		want  []string
	}{
		{"no failures", lifecycle.PreToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{{Plugin: "a"}}}, []string{"note"}},
		{"fail-closed denies a tool call", lifecycle.PreToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{fail("guard", pluginhost.FailClosed)}},
			[]string{"note", "plugin guard failed on pre_tool_use (fail-closed: the tool call is denied): timed out"}},
		{"fail-open lets a tool call proceed", lifecycle.PreToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{fail("guard", pluginhost.FailOpen)}},
			[]string{"note", "plugin guard failed on pre_tool_use (fail-open: the event proceeds): timed out"}},
		{"other events are observed only", lifecycle.PostToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{fail("audit", pluginhost.FailClosed)}},
			[]string{"note", "plugin audit failed on post_tool_use (fail-closed: observed only): timed out"}},
		{"a refused tool", lifecycle.PreToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{fail("(refused)", pluginhost.FailOpen)}},
			[]string{"note", "refused: timed out"}},
		{"a manifest that did not load", lifecycle.PreToolUse, pluginhost.DispatchResult{Outcomes: []pluginhost.Outcome{fail("(manifest)", pluginhost.FailOpen)}},
			[]string{"note", "plugin not loaded: timed out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := PluginReply(&tt.res, tt.event, []string{"note"})
			if !reflect.DeepEqual(r.Failures, tt.want) {
				t.Errorf("failures %q, want %q", r.Failures, tt.want)
			}
		})
	}
	r := PluginReply(&pluginhost.DispatchResult{Denied: true, DeniedBy: "guard", Reason: "no", Contexts: []string{"c"}}, lifecycle.PreToolUse, nil)
	if !r.Denied || r.DeniedBy != "guard" || r.Reason != "no" || len(r.Contexts) != 1 {
		t.Errorf("reply %+v", r)
	}
}

func TestPluginEventShowsOnlyTheEvent(t *testing.T) {
	ev := lifecycle.Event{Name: lifecycle.PreToolUse, SessionID: "s", AgentID: "a1", Tool: "Bash",
		ToolInput: map[string]any{"command": "ls"}, Dir: "/p", ToolClasses: []string{"shell_command_exec"}}
	out, err := PluginEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != lifecycle.PreToolUse || out.ToolName != "Bash" || string(out.ToolInput) != `{"command":"ls"}` {
		t.Errorf("event %+v", out)
	}
	var payload map[string]any
	if err := json.Unmarshal(out.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cwd": "/p", "tool_classes": []any{"shell_command_exec"}}
	if !reflect.DeepEqual(payload, want) {
		t.Errorf("payload %v, want %v (empty fields are left out)", payload, want)
	}
}

func TestHookPluginsWithoutSubscribers(t *testing.T) {
	spawned := false
	h := &HookPlugins{
		Options: func() (pluginhost.Options, error) {
			return pluginhost.Options{ProjectDir: t.TempDir(), NoUserPlugins: true}, nil
		},
		HookServer: func() bool { return true },
		Spawn:      func(string, string, string) error { spawned = true; return nil },
	}
	r := h.Dispatch(context.Background(), lifecycle.Event{Name: lifecycle.PreToolUse, Tool: "Bash"})
	if r.Denied || len(r.Failures) > 0 || len(r.Contexts) > 0 || spawned {
		t.Fatalf("no plugins: reply %+v, hook server started %v", r, spawned)
	}
	h.Options = func() (pluginhost.Options, error) { return pluginhost.Options{}, errors.New("bad plugins.paths") }
	r = h.Dispatch(context.Background(), lifecycle.Event{Name: lifecycle.PreToolUse, Tool: "Bash"})
	if len(r.Failures) != 1 || r.Failures[0] != "plugins: bad plugins.paths" || r.Denied {
		t.Fatalf("options error: %+v", r)
	}
}
