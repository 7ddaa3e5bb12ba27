//go:build linux

package launch

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// runHookServer starts a hook server on dir and returns a stop function
// that waits for it to finish.
func runHookServer(t *testing.T, s *HookServer) (stop func() error) {
	t.Helper()
	ready := make(chan struct{})
	s.Ready = func() { close(ready) }
	if s.Base.Logger == nil {
		s.Base.Logger = plugintest.Logger(t)
	}
	s.Base.NoUserPlugins = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("hook server did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("hook server did not start")
	}
	var stopped bool
	var result error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { stop() })
	return stop
}

// serverPID is the pid of the first plugin of the server's manager.
func serverPID(s *HookServer) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen.m.List()[0].PID
}

// privateDir is a fresh folder for a hook server (short enough for a
// socket path).
func privateDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "nx-hs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return filepath.Join(base, "k")
}

func guardProject(t *testing.T) (project string, opts Options) {
	t.Helper()
	exe := testPluginBinary(t)
	project = t.TempDir()
	plugintest.WriteManifest(t, ProjectPluginDir(project), plugintest.Spec{Name: "guard", Exe: exe, NoTools: true,
		Events: "  pre_tool_use: {timeout: 5s, on_failure: fail-open, tools: [Bash]}"})
	return project, Options{ProjectDir: project, NoUserPlugins: true,
		Settings: map[string]map[string]string{"guard": {"deny": "rm -rf /", "context": "checked by guard"}}}
}

func TestHookServerDispatchAndPermissions(t *testing.T) {
	project, opts := guardProject(t)
	dir := privateDir(t)
	s := &HookServer{Dir: dir, Exe: "nexus-test-1"}
	stop := runHookServer(t, s)

	// Owner-only: the folder admits nobody else, the socket neither.
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, pluginhost.SocketName): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", path, st.Mode().Perm(), want)
		}
	}
	if !strings.HasPrefix(dir, os.TempDir()) || strings.HasPrefix(dir, project) {
		t.Fatalf("runtime folder %s is inside the project", dir)
	}

	ctx := context.Background()
	res, err := DispatchViaServer(ctx, dir, opts, bashEvent("rm -rf /"), "nexus-test-1", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Denied || res.DeniedBy != "guard" || res.Reason != "testplugin refuses rm -rf /" {
		t.Fatalf("result %+v", res)
	}
	// The plugin stays warm: a second event is answered by the same process.
	pid := serverPID(s)
	res, err = DispatchViaServer(ctx, dir, opts, bashEvent("ls"), "nexus-test-1", 5*time.Second)
	if err != nil || res.Denied || strings.Join(res.Contexts, "") != "checked by guard" {
		t.Fatalf("second event: %+v, %v", res, err)
	}
	if again := serverPID(s); again != pid || pid == 0 {
		t.Fatalf("plugin pid %d then %d: not kept warm", pid, again)
	}

	// Settings from the hook's configuration are honoured: a change opens
	// a new manager.
	opts2 := opts
	opts2.Settings = map[string]map[string]string{"guard": {"deny": "ls"}}
	res, err = DispatchViaServer(ctx, dir, opts2, bashEvent("ls"), "nexus-test-1", 5*time.Second)
	if err != nil || !res.Denied {
		t.Fatalf("after a settings change: %+v, %v", res, err)
	}

	// A second server for the same folder refuses to start.
	if err := (&HookServer{Dir: dir, Exe: "x", Base: Options{Logger: plugintest.Logger(t)}}).Run(ctx); !errors.Is(err, ErrHookServerRunning) {
		t.Fatalf("second server: %v", err)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("plugin %d survived the server", pid)
	}
	if _, err := os.Stat(filepath.Join(dir, pluginhost.SocketName)); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := DispatchViaServer(ctx, dir, opts, bashEvent("ls"), "nexus-test-1", time.Second); !errors.Is(err, ErrNoHookServer) {
		t.Fatalf("after stop: %v, want ErrNoHookServer", err)
	}
}

func TestHookServerRefusesOpenFolders(t *testing.T) {
	_, opts := guardProject(t)
	dir := privateDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := (&HookServer{Dir: dir, Exe: "x", Base: Options{Logger: plugintest.Logger(t)}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "must not be open to other users") {
		t.Fatalf("server in a 0755 folder: %v", err)
	}
	if _, err := DispatchViaServer(context.Background(), dir, opts, bashEvent("ls"), "x", time.Second); err == nil || errors.Is(err, ErrNoHookServer) {
		t.Fatalf("client with a 0755 folder: %v", err)
	}
	// Absent: no server.
	if _, err := DispatchViaServer(context.Background(), filepath.Join(dir, "none"), opts, bashEvent("ls"), "x", time.Second); !errors.Is(err, ErrNoHookServer) {
		t.Fatalf("missing folder: %v", err)
	}
}

func TestHookServerUnresponsive(t *testing.T) {
	_, opts := guardProject(t)
	dir := privateDir(t)
	if err := pluginhost.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	// Something listens but never answers (a stopped server, a wedged
	// one): the hook gives up at the acknowledgement deadline.
	ln, err := net.Listen("unix", filepath.Join(dir, pluginhost.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t0 := time.Now()
	_, err = DispatchViaServer(context.Background(), dir, opts, bashEvent("ls"), "x", time.Minute)
	if err == nil || errors.Is(err, ErrNoHookServer) {
		t.Fatalf("unresponsive server: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}

func TestHookServerStepsDownForAnotherBuild(t *testing.T) {
	_, opts := guardProject(t)
	dir := privateDir(t)
	stop := runHookServer(t, &HookServer{Dir: dir, Exe: "old-build"})
	_, err := DispatchViaServer(context.Background(), dir, opts, bashEvent("ls"), "new-build", time.Second)
	if err == nil || !strings.Contains(err.Error(), "another nexus build") {
		t.Fatalf("stale server: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale server did not step down")
	}
}

func TestHookServerIdleExitAndReload(t *testing.T) {
	t.Parallel()
	project, opts := guardProject(t)
	dir := privateDir(t)
	s := &HookServer{Dir: dir, Exe: "b", Idle: time.Second} // long enough for two requests on a loaded machine
	ready := make(chan struct{})
	s.Ready = func() { close(ready) }
	s.Base = Options{Logger: plugintest.Logger(t), NoUserPlugins: true}
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background()) }()
	<-ready
	ev := &sdk.Event{Name: sdk.EventPreToolUse, ToolName: "Bash", ToolInput: []byte(`{"command":"x"}`)}
	if res, err := DispatchViaServer(context.Background(), dir, opts, ev, "b", 5*time.Second); err != nil || res.Denied {
		t.Fatalf("%+v %v", res, err)
	}
	// A new manifest is seen at once.
	plugintest.WriteManifest(t, ProjectPluginDir(project), plugintest.Spec{Name: "guard2", Exe: testPluginBinary(t), NoTools: true,
		Events: "  pre_tool_use: {timeout: 5s, on_failure: fail-open}"})
	opts.Settings["guard2"] = map[string]string{"deny": "x"}
	if res, err := DispatchViaServer(context.Background(), dir, opts, ev, "b", 5*time.Second); err != nil || res.DeniedBy != "guard2" {
		t.Fatalf("after adding a plugin: %+v %v", res, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit when idle")
	}
}
