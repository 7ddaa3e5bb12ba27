package launch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/internal/jsonscan"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

func callPID(t *testing.T, m *pluginhost.Manager, qualified string) int {
	t.Helper()
	res, err := m.CallTool(context.Background(), qualified, nil)
	if err != nil {
		t.Fatalf("%s: %v", qualified, err)
	}
	pid, err := strconv.Atoi(res.Text)
	if err != nil {
		t.Fatalf("%s answered %q", qualified, res.Text)
	}
	return pid
}

func TestToolsAndCall(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))

	if got := m.List()[0].State; got != StateStopped {
		t.Fatalf("before any call the plugin is %s, want stopped (lazy start)", got)
	}
	ref, ok := m.Resolve("tp_config")
	if !ok || ref.Plugin != "tp" || ref.Tool != "config" || strings.Join(ref.CapabilityClasses, ",") != "file_modification" {
		t.Fatalf("Resolve(tp_config) = %+v, %v", ref, ok)
	}
	if m.List()[0].State != StateStopped {
		t.Fatal("Resolve started the plugin")
	}

	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if got, want := strings.Join(names, " "), "tp_echo tp_pid tp_block tp_hang tp_env tp_stdin tp_config"; got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
	if tools[0].Spec.Description != "Return the arguments." || !tools[0].Spec.Annotations.ReadOnly {
		t.Errorf("echo plugintest.Spec = %+v", tools[0].Spec)
	}

	res, err := m.CallTool(context.Background(), "tp_echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `{"text":"hi"}` || string(res.Structured) != `{"text":"hi"}` {
		t.Fatalf("echo = %+v", res)
	}
	st := m.List()[0]
	if st.State != StateRunning || st.PID == 0 {
		t.Fatalf("status after a call = %+v", st)
	}

	if _, err := m.CallTool(context.Background(), "tp_nope", nil); !errors.Is(err, ErrUnknownPlugin) {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestPluginSeesOnlyWhatItIsGiven(t *testing.T) {
	exe := testPluginBinary(t)
	t.Setenv("NEXUS_TEST_SECRET", "s3cret")
	t.Setenv("NEXUS_TEST_ALLOWED", "yes")
	root := t.TempDir()
	project := t.TempDir()
	closed := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "closed", Exe: exe})
	open := plugintest.WriteManifest(t, root, plugintest.Spec{Name: "open", Exe: exe, ProjectDir: true, Extra: "env: [NEXUS_TEST_ALLOWED]\n"})
	m := openManager(t, Options{ProjectDir: project, Settings: map[string]map[string]string{"open": {"k": "v"}}}, closed, open)
	ctx := context.Background()

	call := func(tool string) string {
		res, err := m.CallTool(ctx, tool, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res.Text
	}
	if env := call("closed_env"); strings.Contains(env, "NEXUS_TEST_SECRET") || strings.Contains(env, "NEXUS_TEST_ALLOWED") {
		t.Errorf("plugin received host variables it did not declare:\n%s", env)
	}
	if env := call("open_env"); !strings.Contains(env, "NEXUS_TEST_ALLOWED=yes") || strings.Contains(env, "NEXUS_TEST_SECRET") {
		t.Errorf("declared env not passed exactly:\n%s", env)
	}
	if got := call("closed_stdin"); got != `"" <nil>` {
		t.Errorf("plugin stdin = %s, want empty", got)
	}
	if got := call("closed_config"); got != `{"project_dir":""}` {
		t.Errorf("config without project_dir = %s", got)
	}
	if got, want := call("open_config"), `{"project_dir":"`+project+`","settings":{"k":"v"}}`; got != want {
		t.Errorf("config = %s, want %s", got, want)
	}
}

func TestWrongDigestIsRefused(t *testing.T) {
	exe := testPluginBinary(t)
	wrong := strings.Repeat("0", 64)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe, SHA: wrong}))
	_, err := m.CallTool(context.Background(), "tp_echo", nil)
	var de *DigestError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a DigestError", err)
	}
	actual := plugintest.Digest(t, exe)
	if de.Expected != wrong || de.Actual != actual {
		t.Fatalf("digests = %s / %s", de.Expected, de.Actual)
	}
	for _, s := range []string{wrong, actual, "refused"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	if st := m.List()[0]; st.PID != 0 || st.State == StateRunning {
		t.Fatalf("a refused plugin was started: %+v", st)
	}
	d, err := m.Inspect("tp")
	if err != nil || d.DigestOK || d.ActualSHA256 != actual {
		t.Fatalf("Inspect = %+v, %v", d, err)
	}
	r, err := m.Verify(context.Background(), "tp")
	if err != nil || r.OK || r.ActualSHA256 != actual || !strings.Contains(r.Error, wrong) {
		t.Fatalf("Verify = %+v, %v", r, err)
	}
}

func TestCrashOnThirdCallIsRestarted(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{Settings: map[string]map[string]string{"tp": {"crash_on_call": "3"}}},
		plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	first := callPID(t, m, "tp_pid")
	if got := callPID(t, m, "tp_pid"); got != first {
		t.Fatalf("second call ran in pid %d, first in %d", got, first)
	}
	_, err := m.CallTool(context.Background(), "tp_pid", nil)
	if err == nil || !errors.Is(err, sdk.ErrUnavailable) {
		t.Fatalf("third call: err = %v, want the crash reported as unavailable", err)
	}
	fourth := callPID(t, m, "tp_pid")
	if fourth == first {
		t.Fatal("fourth call answered by the crashed process")
	}
	st := m.List()[0]
	if st.Restarts != 1 || st.State != StateRunning {
		t.Fatalf("status = %+v, want running after 1 restart", st)
	}
}

func TestKillMidCallGivesErrorThenFreshPlugin(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	pid := callPID(t, m, "tp_pid")

	errc := make(chan error, 1)
	args, started := blockStarted(t)
	go func() {
		_, err := m.CallTool(context.Background(), "tp_block", args) // 30s timeout
		errc <- err
	}()
	plugintest.WaitStarted(t, started)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !errors.Is(err, sdk.ErrUnavailable) {
			t.Fatalf("call during the kill: err = %v, want unavailable", err)
		}
		if !strings.Contains(err.Error(), "restarted on the next call") {
			t.Errorf("error does not say what happens next: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call hung after its plugin was killed")
	}
	if fresh := callPID(t, m, "tp_pid"); fresh == pid {
		t.Fatal("the next call went to the killed process")
	}
}

func TestHungCallEndsAtDeadline(t *testing.T) {
	t.Parallel()
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	callPID(t, m, "tp_pid") // started, so only the call is timed

	tests := []struct {
		name  string
		tool  string
		ctx   time.Duration // caller deadline, 0 = none
		limit time.Duration
	}{
		{"tool timeout from the manifest (300ms)", "tp_hang", 0, 300 * time.Millisecond},
		{"caller deadline shorter than the tool timeout", "tp_block", 200 * time.Millisecond, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The clock starts before the caller's deadline is set, so the
			// call cannot seem to end before it.
			t0 := time.Now()
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			_, err := m.CallTool(ctx, tt.tool, nil)
			took := time.Since(t0)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
			if took < tt.limit || took > tt.limit+time.Second {
				t.Fatalf("call ended after %v, want about %v", took, tt.limit)
			}
		})
	}
	// The plugin survives a timed-out call and keeps serving.
	if _, err := m.CallTool(context.Background(), "tp_echo", nil); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	var wg sync.WaitGroup
	pids := make([]int, 16)
	errs := make([]error, 16)
	for i := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := m.CallTool(context.Background(), "tp_pid", nil)
			if err != nil {
				errs[i] = err
				return
			}
			pids[i], _ = strconv.Atoi(res.Text)
		}()
	}
	wg.Wait()
	for i := range pids {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if pids[i] != pids[0] {
			t.Fatalf("concurrent first calls started more than one process: %v", pids)
		}
	}
}

func TestCloseStopsPluginsPromptly(t *testing.T) {
	exe := testPluginBinary(t)
	root := t.TempDir()
	m, err := Open(Options{NoUserPlugins: true, Logger: plugintest.Logger(t), Paths: []string{
		plugintest.WriteManifest(t, root, plugintest.Spec{Name: "a", Exe: exe}),
		plugintest.WriteManifest(t, root, plugintest.Spec{Name: "b", Exe: exe}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := callPID(t, m, "a_pid"), callPID(t, m, "b_pid")
	t0 := time.Now()
	m.Close()
	if took := time.Since(t0); took > time.Second {
		t.Errorf("Close took %v", took)
	}
	for _, pid := range []int{a, b} {
		if alive(pid) {
			t.Errorf("plugin %d still running after Close", pid)
		}
	}
	if _, err := m.CallTool(context.Background(), "a_pid", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

func TestCloseDuringStart(t *testing.T) {
	// A plugin that never completes the handshake: a shell script.
	dir := t.TempDir()
	exe := filepath.Join(dir, "silent.sh")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := Open(Options{NoUserPlugins: true, Logger: plugintest.Logger(t), Paths: []string{plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "silent", Exe: exe})}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.CallTool(context.Background(), "silent_echo", nil)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	m.Close()
	if took := time.Since(t0); took > 2*time.Second {
		t.Fatalf("Close waited %v for a plugin stuck in its handshake", took)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("call to a plugin that never started succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call hung after Close")
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{{0, 0}, {1, 0}, {2, 250 * time.Millisecond}, {3, 500 * time.Millisecond}, {4, time.Second}, {12, 30 * time.Second}, {100, 30 * time.Second}}
	for _, tt := range tests {
		if got := backoff(tt.failures); got != tt.want {
			t.Errorf("backoff(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

func TestRepeatedStartFailuresBackOff(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "broken.sh")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho not a handshake\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := openManager(t, Options{}, plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "broken", Exe: exe}))
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "broken_echo", nil); err == nil || !strings.Contains(err.Error(), "start") {
		t.Fatalf("first call: %v", err)
	}
	// The first failure retries at once; the second starts the backoff.
	if _, err := m.CallTool(ctx, "broken_echo", nil); err == nil {
		t.Fatal("second call succeeded")
	}
	t0 := time.Now()
	_, err := m.CallTool(ctx, "broken_echo", nil)
	if err == nil || !strings.Contains(err.Error(), "next attempt in") {
		t.Fatalf("third call: %v, want a backoff notice", err)
	}
	if time.Since(t0) > 100*time.Millisecond {
		t.Fatal("a call during the backoff waited instead of failing fast")
	}
	if st := m.List()[0]; st.State != StateRestarting || st.LastError == "" {
		t.Fatalf("status = %+v", st)
	}
}

// TestToolResultLimits (issue 22.5): what a plugin returns is held to the
// limits of JSON nexus receives before nexus decodes any of it: structured
// content nesting up to jsonscan.MaxDepth levels passes, one more (or not
// JSON at all) fails the call with the reason; the plugin keeps serving.
func TestToolResultLimits(t *testing.T) {
	exe := testPluginBinary(t)
	m := openManager(t, Options{}, plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	nested := func(depth int) json.RawMessage { // echo returns its arguments as the structured content
		return json.RawMessage(`{"text":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
	}
	for _, c := range []struct {
		name string
		args json.RawMessage
		err  string
	}{
		{"at the limit", nested(jsonscan.MaxDepth), ""},
		{"one over", nested(jsonscan.MaxDepth + 1), "nested deeper than the limit of 64 levels"},
		{"deeper than a JSON library reads", nested(20000), "nested deeper than the limit of 64 levels"},
		{"not JSON", json.RawMessage(`{"text":[}`), "not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := m.CallTool(context.Background(), "tp_echo", c.args)
			if c.err == "" {
				if err != nil || string(res.Structured) != string(c.args) {
					t.Fatalf("%v, %+v", err, res)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "plugin tp returned a result for echo that nexus refuses") || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want the refusal naming %q", err, c.err)
			}
		})
	}
	if _, err := m.CallTool(context.Background(), "tp_echo", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("after refused results: %v", err)
	}
}
