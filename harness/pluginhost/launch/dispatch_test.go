package launch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

func bashEvent(cmd string) *sdk.Event {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return &sdk.Event{Name: sdk.EventPreToolUse, SessionID: "s1", ToolName: "Bash", ToolInput: in}
}

func TestDispatchOrderIsPriorityThenName(t *testing.T) {
	exe := testPluginBinary(t)
	root := t.TempDir()
	sub := "  session_start: {timeout: 5s, on_failure: fail-open}\n  pre_tool_use: {timeout: 5s, on_failure: fail-open}"
	var paths []string
	settings := map[string]map[string]string{}
	for _, p := range []struct {
		name     string
		priority int
	}{{"gamma", 0}, {"alpha", 0}, {"beta", 10}, {"delta", -5}} {
		paths = append(paths, plugintest.WriteManifest(t, root, plugintest.Spec{Name: p.name, Exe: exe, Priority: p.priority, Events: sub, NoTools: true}))
		settings[p.name] = map[string]string{"context": p.name}
	}
	settings["alpha"]["deny"] = "rm -rf /"
	settings["gamma"]["deny"] = "rm -rf /"
	m := openManager(t, Options{Settings: settings}, paths...)

	var order []string
	for _, s := range m.Subscribers(string(sdk.EventSessionStart), "") {
		order = append(order, s.Plugin)
	}
	if got, want := strings.Join(order, ","), "beta,alpha,gamma,delta"; got != want {
		t.Fatalf("Subscribers order = %s, want %s", got, want)
	}

	// An observed event runs every subscriber, in order.
	res := m.Dispatch(context.Background(), &sdk.Event{Name: sdk.EventSessionStart, SessionID: "s1"})
	if got, want := strings.Join(res.Contexts, ","), "beta,alpha,gamma,delta"; got != want {
		t.Fatalf("contexts = %s, want %s (calls out of order)", got, want)
	}
	if res.Denied {
		t.Fatal("session_start was denied")
	}

	// pre_tool_use: the first denial decides and later plugins are not asked.
	res = m.Dispatch(context.Background(), bashEvent("rm -rf / --no-preserve-root"))
	if !res.Denied || res.DeniedBy != "alpha" || res.Reason != "testplugin refuses rm -rf /" {
		t.Fatalf("result = %+v, want denied by alpha", res)
	}
	if len(res.Outcomes) != 2 || res.Outcomes[0].Plugin != "beta" || res.Outcomes[1].Plugin != "alpha" {
		t.Fatalf("outcomes = %+v, want beta then alpha only", res.Outcomes)
	}
	res = m.Dispatch(context.Background(), bashEvent("ls"))
	if res.Denied || len(res.Outcomes) != 4 {
		t.Fatalf("harmless command: %+v", res)
	}
}

func TestDispatchTimeoutFollowsPolicy(t *testing.T) {
	t.Parallel()
	exe := testPluginBinary(t)
	root := t.TempDir()
	open := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "slowopen", Exe: exe, NoTools: true,
		Events: "  pre_tool_use: {timeout: 200ms, on_failure: fail-open}\n  session_end: {timeout: 200ms, on_failure: fail-closed}"})
	closed := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "slowclosed", Exe: exe, NoTools: true, Priority: -1,
		Events: "  pre_tool_use: {timeout: 200ms, on_failure: fail-closed}"})
	slow := map[string]string{"event_sleep": "3s"}

	t.Run("fail-open proceeds", func(t *testing.T) {
		m := openManager(t, Options{Settings: map[string]map[string]string{"slowopen": slow}}, open)
		m.Dispatch(context.Background(), &sdk.Event{Name: sdk.EventSessionStart}) // not subscribed: nothing starts
		if m.List()[0].State != StateStopped {
			t.Fatal("an unsubscribed event started the plugin")
		}
		t0 := time.Now()
		res := m.Dispatch(context.Background(), bashEvent("ls"))
		took := time.Since(t0)
		if res.Denied {
			t.Fatalf("fail-open timeout denied the call: %+v", res)
		}
		if len(res.Outcomes) != 1 || res.Outcomes[0].Err == nil || res.Outcomes[0].Policy != FailOpen {
			t.Fatalf("outcomes = %+v, want one failed fail-open outcome", res.Outcomes)
		}
		if took > 2*time.Second {
			t.Fatalf("dispatch took %v; the subscription timeout is 200ms", took)
		}
		// fail-closed on an observed event cannot deny anything.
		if res := m.Dispatch(context.Background(), &sdk.Event{Name: sdk.EventSessionEnd}); res.Denied {
			t.Fatalf("session_end was denied: %+v", res)
		}
	})
	t.Run("fail-closed denies", func(t *testing.T) {
		m := openManager(t, Options{Settings: map[string]map[string]string{"slowopen": slow, "slowclosed": slow}}, open, closed)
		t0 := time.Now()
		res := m.Dispatch(context.Background(), bashEvent("ls"))
		took := time.Since(t0)
		if !res.Denied || res.DeniedBy != "slowclosed" || !strings.Contains(res.Reason, "fail-closed") {
			t.Fatalf("result = %+v, want denied by slowclosed (fail-closed)", res)
		}
		if len(res.Outcomes) != 2 || res.Outcomes[0].Policy != FailOpen || res.Outcomes[1].Policy != FailClosed {
			t.Fatalf("outcomes = %+v", res.Outcomes)
		}
		if took > 3*time.Second {
			t.Fatalf("dispatch took %v for two 200ms timeouts", took)
		}
	})
}

func TestDispatchToolFilterAndLazyStart(t *testing.T) {
	exe := testPluginBinary(t)
	root := t.TempDir()
	bash := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "bashonly", Exe: exe, NoTools: true,
		Events: "  pre_tool_use: {timeout: 5s, on_failure: fail-open, tools: [Bash]}"})
	start := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "starter", Exe: exe, NoTools: true,
		Events: "  session_start: {timeout: 5s, on_failure: fail-open}"})
	m := openManager(t, Options{}, bash, start)

	if subs := m.Subscribers(string(sdk.EventPreToolUse), "Read"); len(subs) != 0 {
		t.Fatalf("Read matched %v", subs)
	}
	m.Dispatch(context.Background(), &sdk.Event{Name: sdk.EventPreToolUse, ToolName: "Read"})
	for _, st := range m.List() {
		if st.State != StateStopped {
			t.Fatalf("%s started for an event it does not receive", st.Name)
		}
	}
	res := m.Dispatch(context.Background(), bashEvent("ls"))
	if len(res.Outcomes) != 1 || res.Outcomes[0].Plugin != "bashonly" || res.Outcomes[0].Err != nil {
		t.Fatalf("outcomes = %+v", res.Outcomes)
	}
	for _, st := range m.List() {
		if want := st.Name == "bashonly"; (st.State == StateRunning) != want {
			t.Fatalf("%s state %s", st.Name, st.State)
		}
	}
}

func TestDispatchCrashFollowsPolicyAndRecovers(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe,
		Events: "  pre_tool_use: {timeout: 5s, on_failure: fail-closed}"}))
	pid := callPID(t, m, "tp_pid")
	killAndWait(t, pid)
	for deadline := time.Now().Add(3 * time.Second); m.List()[0].State == StateRunning; {
		if time.Now().After(deadline) {
			t.Fatal("the manager never noticed the exit")
		}
		time.Sleep(5 * time.Millisecond)
	}
	res := m.Dispatch(context.Background(), bashEvent("ls"))
	// The dead process is noticed before the call, so a fresh one answers.
	if res.Denied || len(res.Outcomes) != 1 || res.Outcomes[0].Err != nil {
		t.Fatalf("after a crash between calls: %+v", res)
	}
	if callPID(t, m, "tp_pid") == pid {
		t.Fatal("the dead process answered")
	}
}
