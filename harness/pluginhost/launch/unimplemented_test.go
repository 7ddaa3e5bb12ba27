package launch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// TestUnimplementedCallsAreUnderstood runs a plugin that answers
// UNIMPLEMENTED for Configure and HandleEvent and lists no events
// (rawplugin, built without the SDK's Go API), under manifests that
// subscribe it to pre_tool_use anyway. It starts (Configure's UNIMPLEMENTED
// means "no settings") and serves its tool; the event is not sent to it,
// and the subscription's policy decides: fail-open lets the call through,
// fail-closed denies it. Were the event sent, the plugin's own
// UNIMPLEMENTED would read "does not implement this call" instead.
func TestUnimplementedCallsAreUnderstood(t *testing.T) {
	t.Parallel()
	exe := buildPlugin(t, "testdata/rawplugin")
	ev := &sdk.Event{Name: sdk.EventPreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	for _, policy := range []string{"fail-open", "fail-closed"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "raw", Exe: exe,
				Tools:  "\n  - {name: pid, capability_classes: []}",
				Events: "  pre_tool_use: {timeout: 5s, on_failure: " + policy + "}"}))
			callPID(t, m, "raw_pid")

			res := m.Dispatch(context.Background(), ev)
			if len(res.Outcomes) != 1 {
				t.Fatalf("outcomes %+v", res.Outcomes)
			}
			o := res.Outcomes[0]
			if !errors.Is(o.Err, sdk.ErrUnimplemented) || !strings.Contains(o.Error, "its Info does not list this event, so it was not sent") {
				t.Fatalf("outcome error %q (%v), want the event not sent", o.Error, o.Err)
			}
			if denied := policy == "fail-closed"; res.Denied != denied {
				t.Fatalf("denied = %v, want %v (reason %q)", res.Denied, denied, res.Reason)
			}
		})
	}
}
