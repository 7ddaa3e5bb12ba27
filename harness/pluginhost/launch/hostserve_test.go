package launch

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

// pipeHost runs ServeHost in this process behind a pipe and returns the
// BackendFactory that talks to it, and a function that ends the host as if
// its process died.
func pipeHost(t *testing.T) (pluginhost.BackendFactory, func()) {
	t.Helper()
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ServeHost(context.Background(), reqR, repW, Options{Logger: plugintest.Logger(t)})
		repW.Close()
	}()
	// A dead host's output just ends, with no answers.
	kill := func() { repW.CloseWithError(io.ErrUnexpectedEOF) }
	t.Cleanup(func() {
		reqW.Close()
		<-done
	})
	conn := struct {
		io.Reader
		io.WriteCloser
	}{repR, reqW}
	return pluginhost.HostOver(conn), kill
}

// The pipe protocol gives a nexus process the same Manager as running the
// plugins in-process: tools, calls, events, verification, deadlines,
// cancellation, and every plugin stopped at Close.
func TestHostOverPipe(t *testing.T) {
	t.Parallel()
	exe := testPluginBinary(t)
	root := t.TempDir()
	path := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "tp", Exe: exe, Events: "  pre_tool_use: {timeout: 5s, on_failure: fail-open}"})
	factory, _ := pipeHost(t)
	m, err := pluginhost.Open(Options{Paths: []string{path}, NoUserPlugins: true, Backend: factory,
		Settings: map[string]map[string]string{"tp": {"deny": "rm -rf /"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	tools, err := m.Tools(ctx)
	if err != nil || len(tools) != 7 || tools[0].Name != "tp_echo" || tools[0].Spec.Description == "" {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	res, err := m.CallTool(ctx, "tp_echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.Text != `{"text":"hi"}` || string(res.Structured) != `{"text":"hi"}` {
		t.Fatalf("echo %+v, %v", res, err)
	}
	pid := callPID(t, m, "tp_pid")
	if st := m.List()[0]; st.State != StateRunning || st.PID != pid {
		t.Fatalf("status %+v, want running pid %d", st, pid)
	}
	if r := m.Dispatch(ctx, bashEvent("rm -rf /")); !r.Denied || r.Reason != "testplugin refuses rm -rf /" {
		t.Fatalf("dispatch %+v", r)
	}
	rep, err := m.Verify(ctx, "tp")
	if err != nil || !rep.OK || len(rep.Tools) != 7 {
		t.Fatalf("verify %+v, %v", rep, err)
	}

	// The tool's own deadline (hang: 300ms) ends a call that ignores it.
	t0 := time.Now()
	if _, err := m.CallTool(ctx, "tp_hang", nil); err == nil || !strings.Contains(err.Error(), "no answer within its 300ms timeout") || time.Since(t0) > 3*time.Second {
		t.Fatalf("hang: %v after %s", err, time.Since(t0))
	}
	// The caller's deadline travels, and so does cancellation.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	t0 = time.Now()
	_, err = m.CallTool(short, "tp_block", nil)
	cancel()
	if err == nil || time.Since(t0) > 3*time.Second {
		t.Fatalf("block with a 200ms deadline: %v after %s", err, time.Since(t0))
	}
	cctx, cancel := context.WithCancel(ctx)
	args, started := blockStarted(t)
	go func() {
		select {
		case <-started:
		case <-time.After(10 * time.Second): // the call fails the test below either way
		}
		cancel()
	}()
	if _, err := m.CallTool(cctx, "tp_block", args); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if callPID(t, m, "tp_pid") != pid {
		t.Fatal("the plugin was restarted by a deadline")
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	waitDead(t, pid)
	if _, err := m.CallTool(ctx, "tp_pid", nil); err == nil {
		t.Fatal("a call after Close succeeded")
	}
}

// A host that dies fails the calls in flight at once, never hangs them.
func TestHostDeathFailsCallsInFlight(t *testing.T) {
	exe := testPluginBinary(t)
	path := plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe})
	factory, kill := pipeHost(t)
	m, err := pluginhost.Open(Options{Paths: []string{path}, NoUserPlugins: true, Backend: factory})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	callPID(t, m, "tp_pid")
	errc := make(chan error, 1)
	args, started := blockStarted(t)
	go func() {
		_, err := m.CallTool(context.Background(), "tp_block", args)
		errc <- err
	}()
	plugintest.WaitStarted(t, started)
	kill()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "the plugin host exited") {
			t.Fatalf("call in flight: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight hung after the host died")
	}
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
