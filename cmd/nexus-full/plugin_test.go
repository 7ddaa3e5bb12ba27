package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// pluginFixture holds the binaries the plugin tests drive.
type pluginFixture struct {
	nexus, host, testplugin, shellguard string
	home, runtime, nauro                string
}

func newPluginFixture(t *testing.T) *pluginFixture {
	t.Helper()
	bin := t.TempDir()
	f := &pluginFixture{
		nexus:      filepath.Join(bin, "nexus"),
		host:       filepath.Join(bin, pluginhost.HostProgramName),
		testplugin: filepath.Join(bin, "testplugin"),
		shellguard: filepath.Join(bin, "shellguard"),
		home:       t.TempDir(),
		nauro:      t.TempDir(),
	}
	install(t, bin, "nexus")
	install(t, bin, pluginhost.HostProgramName) // next to nexus, as make install puts it
	install(t, bin, "testplugin")
	install(t, bin, "shellguard")
	// The hook server's socket folder: short, private, removed at the end.
	rt, err := os.MkdirTemp("", "nxrt-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	f.runtime = rt
	return f
}

func (f *pluginFixture) env(t *testing.T, extra ...string) []string {
	return append(isolatedEnv(t, f.home,
		"XDG_CACHE_HOME="+filepath.Join(f.home, ".cache"),
		"XDG_RUNTIME_DIR="+f.runtime,
		"NAURO_HOME="+f.nauro,
	), extra...)
}

// project makes a project folder with .nexus/ and an optional nexus.yaml.
func (f *pluginFixture) project(t *testing.T, yaml string) string {
	t.Helper()
	p := t.TempDir()
	if err := os.MkdirAll(filepath.Join(p, ".nexus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if yaml != "" {
		if err := os.WriteFile(filepath.Join(p, config.ProjectFile), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// install puts a plugin into the project's .nexus/plugins/<name>/ with a
// manifest naming its real digest (body: everything after sha256).
func installPlugin(t *testing.T, project, name, exe, body string) string {
	t.Helper()
	dir := filepath.Join(pluginhost.ProjectPluginDir(project), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := pluginhost.FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	man := fmt.Sprintf("name: %s\nversion: \"1.0.0\"\nprotocol_version: 2\nexecutable: %s\nsha256: \"%s\"\n%s", name, exe, sum, body)
	path := filepath.Join(dir, pluginhost.ManifestFile)
	if err := os.WriteFile(path, []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// installShellguard installs the example plugin with its shipped manifest,
// the way docs/plugins.md tells a user to.
func installShellguard(t *testing.T, project, exe string) {
	t.Helper()
	dir := filepath.Join(pluginhost.ProjectPluginDir(project), "shellguard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shellguard"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	man, err := os.ReadFile("../../examples/plugins/shellguard/" + pluginhost.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := pluginhost.FileSHA256(exe)
	man = regexp.MustCompile(`(?m)^sha256: .*$`).ReplaceAll(man, []byte(`sha256: "`+sum+`"`))
	if err := os.WriteFile(filepath.Join(dir, pluginhost.ManifestFile), man, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mcpSession is a running `nexus mcp` driven over its stdin and stdout.
type mcpSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	id     int
}

func startMCP(t *testing.T, bin, dir string, env []string, args ...string) *mcpSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &mcpSession{t: t, cmd: cmd, in: in, lines: make(chan []byte, 16), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	return s
}

// lockedBuffer is a bytes.Buffer the test may read while the child's
// stderr is still being copied into it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// notify writes a notification (no id, no answer).
func (s *mcpSession) notify(method string, params any) {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
}

// send writes a request; receive reads the next answer, which must be a
// JSON-RPC message (plugin chatter on stdout would fail here).
func (s *mcpSession) send(method string, params any) int {
	s.t.Helper()
	s.id++
	if _, err := io.WriteString(s.in, rpc(s.id, method, params)); err != nil {
		s.t.Fatal(err)
	}
	return s.id
}

func (s *mcpSession) receive(id int, within time.Duration) map[string]any {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("nexus mcp closed stdout; stderr:\n%s", s.stderr)
		}
		var msg map[string]any
		if err := json.Unmarshal(line, &msg); err != nil || msg["jsonrpc"] != "2.0" {
			s.t.Fatalf("stdout carried something other than JSON-RPC: %q", line)
		}
		if got, _ := msg["id"].(float64); int(got) != id {
			s.t.Fatalf("answer to %v, want %d: %s", msg["id"], id, line)
		}
		return msg
	case <-time.After(within):
		s.t.Fatalf("no answer to request %d within %s; stderr:\n%s", id, within, s.stderr)
	}
	return nil
}

func (s *mcpSession) request(method string, params any) map[string]any {
	s.t.Helper()
	return s.receive(s.send(method, params), 30*time.Second)
}

// call runs a tool and returns its text and isError.
func (s *mcpSession) call(name string, args any, meta map[string]any) (string, bool) {
	s.t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		p["_meta"] = meta
	}
	return toolText(s.t, s.request("tools/call", p))
}

func toolText(t *testing.T, msg map[string]any) (string, bool) {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a tool result: %v", msg)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("content %v", res["content"])
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	isErr, _ := res["isError"].(bool)
	return text, isErr
}

func (s *mcpSession) toolNames() []string {
	s.t.Helper()
	res := s.request("tools/list", nil)["result"].(map[string]any)
	var names []string
	for _, tl := range res["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}

// closeStdin ends the session as a client does and waits for the exit.
func (s *mcpSession) closeStdin() {
	s.t.Helper()
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.t.Fatalf("nexus mcp: %v; stderr:\n%s", err, s.stderr)
		}
	case <-time.After(15 * time.Second):
		s.t.Fatal("nexus mcp did not exit at end of input")
	}
}

// childPIDs lists the live descendants of pid whose command line contains
// want (plugins run under nexus's plugin host, a child of nexus).
func childPIDs(t testing.TB, pid int, want string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	parent := map[int]int{}
	cmdlines := map[int]string{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		parent[p], _ = strconv.Atoi(fields[1])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdlines[p] = strings.ReplaceAll(string(cmdline), "\x00", " ")
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				if strings.Contains(cmdlines[p], want) {
					out = append(out, p)
				}
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// withoutPATH returns env without its PATH entry.
func withoutPATH(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return out
}

// blockArgs are arguments for the test plugin's block tool, which signals
// when the call reaches it (plugintest.StartSignal).
func blockArgs(t *testing.T, text string) (map[string]any, <-chan struct{}) {
	t.Helper()
	fifo, started := plugintest.StartSignal(t)
	return map[string]any{"text": text, "started": fifo}, started
}

const tpTools = `tools:
  - {name: block, capability_classes: [], timeout: 30s}
  - {name: echo, capability_classes: [file_modification]}
  - {name: pid, capability_classes: []}
  - {name: hang, capability_classes: [], timeout: 300ms}
`

// TestPluginsOverMCP drives the built binary's `nexus mcp` over stdio with
// the bundled decision store, the example plugin and a test plugin.
func TestPluginsOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	f := newPluginFixture(t)
	env := f.env(t)
	proj := f.project(t, "")
	if out, errOut, code := runNexus(t, f.nexus, proj, env, "", "decision", "init", "shop"); code != 0 {
		t.Fatalf("decision init: %s %s", out, errOut)
	}
	if out, errOut, code := runNexus(t, f.nexus, proj, env, "", "decision", "propose", "--title", "Use PostgreSQL for orders",
		"--rationale", "Orders need transactions across tables and the team knows PostgreSQL well."); code != 0 {
		t.Fatalf("decision propose: %s %s", out, errOut)
	}
	installShellguard(t, proj, f.shellguard)
	installPlugin(t, proj, "tp", f.testplugin, tpTools)
	// A plugin that never answers the handshake: it is left out after its
	// own start deadline and named; every other plugin is served.
	hung := filepath.Join(t.TempDir(), "hung.sh")
	if err := os.WriteFile(hung, []byte("#!/bin/sh\necho hung plugin here >&2\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	installPlugin(t, proj, "hung", hung, "start_timeout: 1s\ntools:\n  - {name: nap, capability_classes: []}\n")

	t0 := time.Now()
	s := startMCP(t, f.nexus, proj, env)
	s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
	names := s.toolNames()
	// The figure (deadline + 150 ms) is TestPluginLatency's; here, on a
	// loaded test machine, only that nothing waits much past the deadline.
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("with a hung plugin (start_timeout 1s), start to tools/list took %s, want about 1s", took)
	} else {
		t.Logf("with a hung plugin (start_timeout 1s): start to tools/list %s", took.Round(time.Millisecond))
	}
	if slices.Contains(names, "hung_nap") {
		t.Error("the hung plugin's tool is served")
	}
	if want := "nexus mcp: not served: plugin hung did not start: no handshake within 1s; the process was killed by nexus; last stderr lines: hung plugin here"; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, s.stderr)
	}
	for _, want := range append(decisionsapi.Tools(), "nx_plan_start", "nx_task_add", "nx_context", "shellguard_assess_command", "tp_echo", "tp_hang") {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "decisions_") || strings.HasPrefix(name, "nx_check") {
			t.Errorf("decision tool served under %s", name)
		}
	}

	t.Run("check_decision answers", func(t *testing.T) {
		text, isErr := s.call("check_decision", map[string]any{"proposed_approach": "store orders in PostgreSQL tables"}, nil)
		if isErr || !strings.Contains(text, "Use PostgreSQL for orders") {
			t.Fatalf("check_decision: %v %q", isErr, text)
		}
		text, isErr = s.call("check_decision", map[string]any{"context": "x"}, nil)
		if !isErr || !strings.Contains(text, `missing required parameter \"proposed_approach\"`) {
			t.Fatalf("bad call: %v %q", isErr, text)
		}
		text, isErr = s.call("check_decision", map[string]any{"proposed_approach": 42}, nil)
		if !isErr || !strings.Contains(text, `parameter \"proposed_approach\" must be a string`) {
			t.Fatalf("mistyped call: %v %q", isErr, text)
		}
	})

	t.Run("example plugin tool", func(t *testing.T) {
		text, isErr := s.call("shellguard_assess_command", map[string]any{"command": "rm -rf /"}, nil)
		if isErr || !strings.HasPrefix(text, "refused: ") {
			t.Fatalf("%v %q", isErr, text)
		}
	})

	t.Run("hung call ends at its deadline", func(t *testing.T) {
		t0 := time.Now()
		text, isErr := s.call("tp_hang", map[string]any{}, nil)
		d := time.Since(t0)
		if !isErr || !strings.Contains(text, "no answer within its 300ms timeout") {
			t.Fatalf("%v %q", isErr, text)
		}
		if d > 3*time.Second {
			t.Fatalf("the hung call took %s", d)
		}
		if text, isErr := s.call("tp_echo", map[string]any{"text": "still here"}, nil); isErr || !strings.Contains(text, "still here") {
			t.Fatalf("after the hung call: %v %q", isErr, text)
		}
	})

	t.Run("cancellation reaches the plugin", func(t *testing.T) {
		// A slow plugin call does not hold up other requests, and
		// notifications/cancelled ends its context in the plugin: the
		// plugin prints the moment it saw that (same machine, same clock).
		var lags durations
		for i := 0; i < 20; i++ {
			marker := fmt.Sprintf("cancel-%d", i)
			args, started := blockArgs(t, marker)
			id := s.send("tools/call", map[string]any{"name": "tp_block", "arguments": args})
			plugintest.WaitStarted(t, started)
			if i == 0 {
				if text, isErr := s.call("tp_echo", map[string]any{"text": "beside"}, nil); isErr || !strings.Contains(text, "beside") {
					t.Fatalf("a call beside the slow one: %v %q", isErr, text)
				}
			}
			sent := time.Now()
			s.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "test"})
			re := regexp.MustCompile(`"text":"` + marker + `"\} ended at (\d+): context canceled`)
			var m []string
			for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); {
				if m = re.FindStringSubmatch(s.stderr.String()); m == nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
			if m == nil {
				t.Fatalf("the plugin never saw call %d cancelled; stderr:\n%s", id, s.stderr)
			}
			at, _ := strconv.ParseInt(m[1], 10, 64)
			lags = append(lags, time.Unix(0, at).Sub(sent))
		}
		med := lags.quantile(0.5)
		t.Logf("cancellation: notification to the plugin's context ending, median of %d: %s (p90 %s)", len(lags), med, lags.quantile(0.9))
		if med > 50*time.Millisecond {
			t.Errorf("median %s, want at most 50ms", med)
		}
		// No answer to the cancelled calls: the next line is the ping's.
		if msg := s.request("ping", nil); msg["error"] != nil {
			t.Fatalf("ping: %v", msg)
		}
	})

	t.Run("plugin killed mid-call", func(t *testing.T) {
		// A call the plugin certainly holds (it signals through a FIFO when
		// the call reaches it) fails naming the crash, and the next call
		// starts the plugin again.
		pids := childPIDs(t, s.cmd.Process.Pid, "testplugin")
		if len(pids) != 1 {
			t.Fatalf("test plugin processes: %v", pids)
		}
		old := pids[0]
		args, started := blockArgs(t, "killed")
		id := s.send("tools/call", map[string]any{"name": "tp_block", "arguments": args})
		plugintest.WaitStarted(t, started)
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		text, isErr := toolText(t, s.receive(id, 10*time.Second))
		if !isErr || !strings.Contains(text, "crashed during tool block") {
			t.Fatalf("call during the kill: %v %q", isErr, text)
		}
		if text, isErr := s.call("tp_echo", map[string]any{"text": "again"}, nil); isErr || !strings.Contains(text, "again") {
			t.Fatalf("next call: %v %q", isErr, text)
		}
		now := childPIDs(t, s.cmd.Process.Pid, "testplugin")
		if len(now) != 1 || now[0] == old {
			t.Fatalf("after the restart: %v (old %d)", now, old)
		}
	})

	t.Run("bundled store killed between calls", func(t *testing.T) {
		pids := childPIDs(t, s.cmd.Process.Pid, "serve decisions")
		if len(pids) != 1 {
			t.Fatalf("decision plugin processes: %v", pids)
		}
		old := pids[0]
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Once nexus has reaped the process it sends no call to it: the
		// next call starts a fresh store. A call can still race the reaping
		// by a few microseconds; that one fails naming the crash, as a call
		// in flight does, and the one after it is answered.
		waitFor(t, "nexus to reap the killed store", func() bool {
			_, err := os.Stat(fmt.Sprintf("/proc/%d", old))
			return os.IsNotExist(err)
		})
		text, isErr := s.call("check_decision", map[string]any{"proposed_approach": "orders in PostgreSQL"}, nil)
		if isErr && strings.Contains(text, "crashed during tool check_decision") {
			t.Logf("the first call raced the reaping: %s", text)
			text, isErr = s.call("check_decision", map[string]any{"proposed_approach": "orders in PostgreSQL"}, nil)
		}
		if isErr || !strings.Contains(text, "Use PostgreSQL for orders") {
			t.Fatalf("next call: %v %q", isErr, text)
		}
		now := childPIDs(t, s.cmd.Process.Pid, "serve decisions")
		if len(now) != 1 || now[0] == old {
			t.Fatalf("after the restart: %v (old %d)", now, old)
		}
	})

	t.Run("end of input stops every plugin", func(t *testing.T) {
		plugins := childPIDs(t, s.cmd.Process.Pid, "")
		if len(plugins) < 4 {
			t.Fatalf("processes %v, want the plugin host, the store, shellguard and tp", plugins)
		}
		s.closeStdin()
		waitGone(t, plugins...)
		if strings.Contains(s.stderr.String(), "panic") {
			t.Fatalf("stderr: %s", s.stderr)
		}
	})
}

func TestPluginsMCPShutdownAndGate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	f := newPluginFixture(t)
	env := f.env(t)
	proj := f.project(t, "")
	installPlugin(t, proj, "tp", f.testplugin, tpTools)

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		t.Run("signal "+sig.String(), func(t *testing.T) {
			s := startMCP(t, f.nexus, proj, env)
			s.toolNames()
			plugins := childPIDs(t, s.cmd.Process.Pid, "")
			if len(plugins) != 3 {
				t.Fatalf("processes %v, want the plugin host, the store and tp", plugins)
			}
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("nexus mcp ignored the signal")
			}
			waitGone(t, plugins...)
		})
	}

	t.Run("decisions.enabled off", func(t *testing.T) {
		s := startMCP(t, f.nexus, proj, f.env(t, "NEXUS_DECISIONS_ENABLED=false"))
		if names := s.toolNames(); slices.Contains(names, "check_decision") || !slices.Contains(names, "tp_echo") {
			t.Fatalf("tools %v", names)
		}
		s.closeStdin()
	})

	t.Run("--only decisions and --without decisions", func(t *testing.T) {
		s := startMCP(t, f.nexus, proj, env, "--only", "decisions")
		init := s.request("initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "test", "version": "0"}})
		if name := init["result"].(map[string]any)["serverInfo"].(map[string]any)["name"]; name != "nauro" {
			t.Errorf("serverInfo.name = %v, want nauro", name)
		}
		names := s.toolNames()
		slices.Sort(names)
		want := decisionsapi.Tools()
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("--only decisions serves %v, want %v", names, want)
		}
		// Listed from the store's own descriptions: the store starts on
		// the first call, not before the server answers.
		if store := childPIDs(t, s.cmd.Process.Pid, "serve decisions"); len(store) != 0 {
			t.Errorf("--only decisions started the store before its first call: %v", store)
		}
		if text, isErr := s.call("check_decision", map[string]any{"proposed_approach": "use redis"}, nil); isErr {
			t.Fatalf("check_decision: %q", text)
		}
		if store := childPIDs(t, s.cmd.Process.Pid, "serve decisions"); len(store) != 1 {
			t.Errorf("the store runs as %v after its first call", store)
		}
		s.closeStdin()

		s = startMCP(t, f.nexus, proj, env, "--without", "decisions")
		names = s.toolNames()
		if slices.Contains(names, "check_decision") || !slices.Contains(names, "nx_plan_start") || !slices.Contains(names, "tp_echo") {
			t.Fatalf("--without decisions serves %v", names)
		}
		if store := childPIDs(t, s.cmd.Process.Pid, "serve decisions"); len(store) != 0 {
			t.Errorf("--without decisions started the store: %v", store)
		}
		s.closeStdin()

		for _, args := range [][]string{{"--only", "tp"}, {"--only", "decisions", "--without", "decisions"}} {
			if _, stderr, code := runNexus(t, f.nexus, proj, env, "", append([]string{"mcp"}, args...)...); code != 2 {
				t.Errorf("mcp %v exit %d, want 2: %s", args, code, stderr)
			}
		}
		if _, stderr, code := runNexus(t, f.nexus, proj, f.env(t, "NEXUS_DECISIONS_ENABLED=false"), "", "mcp", "--only", "decisions"); code != 2 || !strings.Contains(stderr, "turned off") {
			t.Errorf("--only decisions with the store off: exit %d %s", code, stderr)
		}
	})

	t.Run("capability gate over MCP", func(t *testing.T) {
		gated := f.project(t, "gate:\n  unplanned_edit: off\n")
		installPlugin(t, gated, "tp", f.testplugin, tpTools)
		s := startMCP(t, f.nexus, gated, env, "--agent", "architect")
		text, isErr := s.call("tp_echo", map[string]any{"text": "x"}, nil)
		if !isErr || !strings.Contains(text, "nexus denied tp_echo: the architect agent has capability no_file_edit") {
			t.Fatalf("architect: %v %q", isErr, text)
		}
		if _, isErr := s.call("tp_pid", map[string]any{}, nil); isErr {
			t.Fatal("a tool without classes was denied")
		}
		if text, isErr := s.call("tp_echo", map[string]any{"text": "x"}, map[string]any{"nexus/agent_type": "nexus:engineer"}); isErr {
			t.Fatalf("engineer (per-request _meta): %q", text)
		}
		s.closeStdin()

		// The same tool at PreToolUse, as Claude Code names it.
		for role, deny := range map[string]bool{"architect": true, "engineer": false} {
			p := payload(t, map[string]any{"hook_event_name": "PreToolUse", "cwd": gated, "agent_id": "a1", "agent_type": role,
				"tool_name": "mcp__nexus__tp_echo", "tool_input": map[string]any{"text": "x"}})
			out, errOut, _ := runNexus(t, f.nexus, gated, env, string(p), "hook")
			if deny != strings.Contains(out, `"permissionDecision":"deny"`) || (deny && !strings.Contains(out, "no_file_edit")) || errOut != "" {
				t.Errorf("%s: %q %q", role, out, errOut)
			}
		}
	})
}

// hookServers lists the hook servers started for a project.
func hookServers(t *testing.T, project string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), "hook-server\x00--project\x00"+project+"\x00") && processAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func killHookServers(t *testing.T, project string) {
	for _, pid := range hookServers(t, project) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPluginsThroughHooks: the example plugin installed into a project
// denies its command at PreToolUse through `nexus hook`, in-process and
// through the hook server, which starts on demand, keeps the plugin warm,
// is owner-only, and is not needed (a hook falls back) when it is gone or
// stuck.
func TestPluginsThroughHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	f := newPluginFixture(t)
	// nexus's own gate would deny rm -rf / first, as an unplanned edit.
	proj := f.project(t, "gate:\n  unplanned_edit: off\n")
	installShellguard(t, proj, f.shellguard)
	t.Cleanup(func() { killHookServers(t, proj) })
	pre := func(tool, command string) string {
		return string(payload(t, map[string]any{"hook_event_name": "PreToolUse", "cwd": proj, "agent_id": "e1", "agent_type": "engineer",
			"tool_name": tool, "tool_input": map[string]any{"command": command, "file_path": filepath.Join(proj, "x")}}))
	}
	hook := func(env []string, p string) string {
		t.Helper()
		out, errOut, code := runNexus(t, f.nexus, proj, env, p, "hook")
		if code != 0 || errOut != "" {
			t.Fatalf("hook: exit %d, stderr %q", code, errOut)
		}
		return out
	}
	denied := func(out string) bool {
		var r struct {
			HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
		}
		_ = json.Unmarshal([]byte(out), &r)
		return r.HookSpecificOutput.PermissionDecision == "deny" && strings.HasPrefix(r.HookSpecificOutput.PermissionDecisionReason, "shellguard: ")
	}

	t.Run("in-process", func(t *testing.T) {
		env := f.env(t, "NEXUS_PLUGINS_HOOK_SERVER=false")
		if out := hook(env, pre("Bash", "rm -rf /")); !denied(out) {
			t.Fatalf("rm -rf / not denied: %q", out)
		}
		if out := hook(env, pre("Bash", "ls -la")); out != "" {
			t.Fatalf("ls: %q", out)
		}
		if out := hook(env, pre("Read", "rm -rf /")); out != "" {
			t.Fatalf("Read (not subscribed): %q", out)
		}
		if servers := hookServers(t, proj); len(servers) != 0 {
			t.Fatalf("a hook server started with plugins.hook_server off: %v", servers)
		}
	})

	env := f.env(t)
	t.Setenv("XDG_RUNTIME_DIR", f.runtime) // as the hook processes see it
	dir, err := pluginhost.RuntimeDir(proj)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "hooks.sock")

	t.Run("hook server", func(t *testing.T) {
		// The first hook handles the event itself and starts the server.
		if out := hook(env, pre("Bash", "rm -rf /")); !denied(out) {
			t.Fatalf("first hook: %q", out)
		}
		waitFor(t, "the hook server's socket", func() bool { _, err := os.Stat(sock); return err == nil })
		servers := hookServers(t, proj)
		if len(servers) != 1 {
			t.Fatalf("hook servers %v", servers)
		}
		// Owner-only, outside the project.
		for path, want := range map[string]os.FileMode{dir: 0o700, sock: 0o600} {
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != want {
				t.Fatalf("%s: %v %v, want mode %o", path, st.Mode(), err, want)
			}
		}
		if strings.HasPrefix(dir, proj) {
			t.Fatalf("socket folder %s inside the project", dir)
		}
		// Later hooks go through it: the plugin stays running under it.
		for i := 0; i < 3; i++ {
			if out := hook(env, pre("Bash", "rm -rf /")); !denied(out) {
				t.Fatalf("hook %d: %q", i, out)
			}
		}
		warm := childPIDs(t, servers[0], "shellguard")
		if len(warm) != 1 {
			t.Fatalf("shellguard under the server: %v", warm)
		}
		if out := hook(env, pre("Bash", "ls")); out != "" || !slices.Equal(childPIDs(t, servers[0], "shellguard"), warm) {
			t.Fatalf("ls through the warm plugin: %q", out)
		}

		// Stuck server: the hook falls back within its acknowledgement
		// deadline and still denies.
		if err := syscall.Kill(servers[0], syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		out := hook(env, pre("Bash", "rm -rf /"))
		_ = syscall.Kill(servers[0], syscall.SIGCONT)
		if !denied(out) || time.Since(t0) > 5*time.Second {
			t.Fatalf("with a stuck server: %q after %s", out, time.Since(t0))
		}

		// Dead server: the next hook handles the event and starts another.
		if err := syscall.Kill(servers[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, servers[0])
		waitGone(t, warm...) // the plugin dies with its server
		if out := hook(env, pre("Bash", "rm -rf /")); !denied(out) {
			t.Fatalf("after the server died: %q", out)
		}
		waitFor(t, "a new hook server", func() bool {
			s := hookServers(t, proj)
			return len(s) == 1 && s[0] != servers[0]
		})
	})

	t.Run("failures follow the policy and reach nexus.log", func(t *testing.T) {
		p := f.project(t, "plugins:\n  settings:\n    slowopen:\n      event_sleep: 3s\n    slowclosed:\n      event_sleep: 3s\n")
		t.Cleanup(func() { killHookServers(t, p) })
		installPlugin(t, p, "slowopen", f.testplugin, "events:\n  pre_tool_use: {timeout: 200ms, on_failure: fail-open, tools: [Bash]}\n")
		installPlugin(t, p, "slowclosed", f.testplugin, "priority: -1\nevents:\n  pre_tool_use: {timeout: 200ms, on_failure: fail-closed, tools: [Grep]}\n")
		env := f.env(t, "NEXUS_PLUGINS_HOOK_SERVER=false")
		call := func(tool string) string {
			b := payload(t, map[string]any{"hook_event_name": "PreToolUse", "cwd": p, "tool_name": tool, "tool_input": map[string]any{"command": "ls", "pattern": "x"}})
			out, errOut, _ := runNexus(t, f.nexus, p, env, string(b), "hook")
			if errOut != "" {
				t.Fatalf("stderr %q", errOut)
			}
			return out
		}
		if out := call("Bash"); out != "" {
			t.Fatalf("fail-open timeout: %q", out)
		}
		if out := call("Grep"); !strings.Contains(out, `"deny"`) || !strings.Contains(out, "plugin slowclosed could not check this call and its policy is fail-closed") {
			t.Fatalf("fail-closed timeout: %q", out)
		}
		log, err := os.ReadFile(filepath.Join(p, ".nexus", "state", "nexus", "nexus.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"plugin slowopen failed on pre_tool_use (fail-open: the event proceeds)", "plugin slowclosed failed on pre_tool_use (fail-closed: the tool call is denied)"} {
			if !strings.Contains(string(log), want) {
				t.Errorf("nexus.log lacks %q:\n%s", want, log)
			}
		}
	})
}

// TestPluginCommands: list, inspect and verify, in text and JSON.
func TestPluginCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	f := newPluginFixture(t)
	env := f.env(t)
	proj := f.project(t, "")
	installShellguard(t, proj, f.shellguard)
	badSum := installPlugin(t, proj, "tampered", f.testplugin, tpTools)
	data, _ := os.ReadFile(badSum)
	if err := os.WriteFile(badSum, regexp.MustCompile(`sha256: ".*"`).ReplaceAll(data, []byte(`sha256: "`+strings.Repeat("0", 64)+`"`)), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runNexus(t, f.nexus, proj, env, "", "plugin", "list", "--json")
	var list struct {
		Plugins []pluginhost.PluginStatus
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	var got []string
	for _, p := range list.Plugins {
		got = append(got, p.Name+"@"+string(p.Source))
	}
	if strings.Join(got, " ") != "decisions@builtin shellguard@project tampered@project" {
		t.Fatalf("list: %v", got)
	}
	out, _, _ = runNexus(t, f.nexus, proj, env, "", "plugin", "list")
	if !strings.Contains(out, "shellguard 0.1.0 (project)") || !strings.Contains(out, "tools:  shellguard_assess_command") || !strings.Contains(out, "events: pre_tool_use") {
		t.Fatalf("list text:\n%s", out)
	}

	if out, _, code := runNexus(t, f.nexus, proj, env, "", "plugin", "inspect", "shellguard"); code != 0 || !strings.Contains(out, "(matches)") || !strings.Contains(out, "pre_tool_use  timeout 2s, fail-open, tools: Bash") {
		t.Fatalf("inspect shellguard: %d\n%s", code, out)
	}
	if out, _, code := runNexus(t, f.nexus, proj, env, "", "plugin", "inspect", "tampered"); code != 1 || !strings.Contains(out, "MISMATCH") {
		t.Fatalf("inspect tampered: %d\n%s", code, out)
	}
	if _, errOut, code := runNexus(t, f.nexus, proj, env, "", "plugin", "inspect", "nope"); code != 1 || !strings.Contains(errOut, `no plugin named "nope"`) {
		t.Fatalf("inspect nope: %d %q", code, errOut)
	}

	out, _, code = runNexus(t, f.nexus, proj, env, "", "plugin", "verify", "shellguard", "--json")
	var v struct {
		Reports []pluginhost.VerifyReport
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v.Reports) != 1 {
		t.Fatalf("verify shellguard: %d %q", code, out)
	}
	r := v.Reports[0]
	if !r.OK || !r.MTLS || r.Protocol != 2 || len(r.Tools) != 1 || r.Tools[0].Name != "shellguard_assess_command" || r.Subscriptions["pre_tool_use"].OnFailure != "fail-open" {
		t.Fatalf("verify report %+v", r)
	}
	if out, _, code := runNexus(t, f.nexus, proj, env, "", "plugin", "verify", "decisions"); code != 0 || !strings.Contains(out, "decisions: ok") || !strings.Contains(out, "tool         check_decision") {
		t.Fatalf("verify decisions: %d\n%s", code, out)
	}
	out, _, code = runNexus(t, f.nexus, proj, env, "", "plugin", "verify")
	if code != 1 || !strings.Contains(out, "tampered: FAILED") || !strings.Contains(out, "plugin tampered refused") || !strings.Contains(out, "shellguard: ok") {
		t.Fatalf("verify all: %d\n%s", code, out)
	}
	// A plugin never takes a name nexus or its bundled store serves; the
	// refusal reads the same in list, verify and nexus mcp.
	clash := f.project(t, "")
	installPlugin(t, clash, "check", f.testplugin, "tools:\n  - {name: decision, capability_classes: []}\n  - {name: echo, capability_classes: []}\n")
	refused := `plugin check: tool "decision" is not served: its name check_decision is reserved (nexus's built-in plugin decisions serves it); rename the plugin or the tool`
	if out, _, _ := runNexus(t, f.nexus, clash, env, "", "plugin", "list"); !strings.Contains(out, "refused: "+refused) {
		t.Errorf("list does not refuse the clash:\n%s", out)
	}
	if out, _, _ := runNexus(t, f.nexus, clash, env, "", "plugin", "verify", "check"); !strings.Contains(out, "note         "+refused) || strings.Contains(out, "tool         check_decision") {
		t.Errorf("verify does not mention the clash:\n%s", out)
	}
	ms := startMCP(t, f.nexus, clash, env)
	names := ms.toolNames()
	if !slices.Contains(names, "check_echo") || slices.Contains(names, "check_check_decision") {
		t.Errorf("tools/list with the clash: %v", names)
	}
	ms.closeStdin()
	if !strings.Contains(ms.stderr.String(), "nexus mcp: not served: "+refused) {
		t.Errorf("nexus mcp does not name the clash:\n%s", ms.stderr)
	}

	// Run by hand, the built-in plugin explains itself.
	if _, errOut, code := runNexus(t, f.host, proj, env, "", "serve", "decisions"); code != 1 || !strings.Contains(errOut, "This binary is a plugin") {
		t.Fatalf("nexus-plugins serve decisions by hand: %d %q", code, errOut)
	}
	// Without the plugin host, nexus says what is missing.
	alone := nexusAlone(t)
	// PATH must not lead to an installed nexus-plugins either.
	bare := append([]string{"PATH=" + t.TempDir()}, withoutPATH(env)...)
	if _, errOut, code := runNexus(t, alone, proj, bare, "", "plugin", "verify", "shellguard"); code == 0 || !strings.Contains(errOut, "the plugin host nexus-plugins is not installed") {
		t.Fatalf("verify without the plugin host: %d %q", code, errOut)
	}
}
