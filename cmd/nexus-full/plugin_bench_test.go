package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/launch"
	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

// Plugin figures. Go benchmarks (medians reported as metrics):
//
//	go test -run '^$' -bench 'DecisionsPlugin|MCPPluginToolCall' -benchtime 200x ./cmd/nexus/
//
// End-to-end process timings (nexus mcp start to tools/list with five
// plugins, PreToolUse hooks with and without a subscribed plugin):
//
//	scripts/bench-plugins.sh

type durations []time.Duration

func (d durations) quantile(q float64) time.Duration {
	s := append(durations(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*q)]
}

func (d durations) report(b *testing.B, unit string, scale time.Duration) {
	if len(d) == 0 {
		return
	}
	b.ReportMetric(float64(d.quantile(0.5))/float64(scale), unit+"-median")
	b.ReportMetric(float64(d.quantile(0.9))/float64(scale), unit+"-p90")
}

// benchStore builds nexus like `make build` and a project with a small
// decision store (NAURO_HOME under home).
func benchStore(b *testing.B) (bin, proj string, env []string) {
	b.Helper()
	bin = buildNexus(b, b.TempDir())
	home, nauro := b.TempDir(), b.TempDir()
	proj = b.TempDir()
	env = append(hookEnv(b, home), "NAURO_HOME="+nauro, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	run := func(args ...string) {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = proj, env
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("nexus %v: %v\n%s", args, err, out)
		}
	}
	run("decision", "init", "bench")
	for i, title := range []string{"Use PostgreSQL for orders", "Serve the site from S3 and CloudFront", "Queue jobs in Redis streams"} {
		run("decision", "propose", "--title", title, "--rationale", fmt.Sprintf("Decision %d: a rationale long enough to pass the screening rules.", i))
	}
	return bin, proj, env
}

// BenchmarkDecisionsPluginStart: the bundled store started cold
// (`nexus-plugins serve decisions`: launch, handshake with mutual TLS,
// Info, Configure) until its first check_decision is answered, by the
// plugin runtime (package launch, as in the plugin host). A built-in
// plugin has no digest to check, so no digest cache is involved.
func BenchmarkDecisionsPluginStart(b *testing.B) {
	bin, proj, env := benchStore(b)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	man := harness.DecisionsManifest(proj, filepath.Join(filepath.Dir(bin), pluginhost.HostProgramName))
	args := json.RawMessage(`{"proposed_approach":"store orders in PostgreSQL"}`)
	var s durations
	for b.Loop() {
		m, err := launch.New([]*pluginhost.Manifest{man}, pluginhost.Options{ProjectDir: proj, NoUserPlugins: true, Logger: pluginhost.NopLogger{}})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		res, err := m.CallTool(context.Background(), "check_decision", args)
		d := time.Since(t0)
		m.Close()
		if err != nil || res.IsError || !strings.Contains(res.Text, "Use PostgreSQL") {
			b.Fatalf("check_decision: %+v %v", res, err)
		}
		s = append(s, d)
	}
	s.report(b, "ms", time.Millisecond)
}

// BenchmarkMCPPluginToolCall: a tools/call round trip through the built
// `nexus mcp` (stdin/stdout pipes) to the running decision store plugin,
// warm: check_decision on a small store.
func BenchmarkMCPPluginToolCall(b *testing.B) {
	bin, proj, env := benchStore(b)
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = proj, env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	r := bufio.NewReader(out)
	id := 0
	call := func() string {
		id++
		if _, err := io.WriteString(in, toolCall(id, "check_decision", map[string]any{"proposed_approach": "store orders in PostgreSQL"})); err != nil {
			b.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	for i := 0; i < 20; i++ {
		if line := call(); !strings.Contains(line, "Use PostgreSQL") || strings.Contains(line, `"isError":true`) {
			b.Fatalf("warm-up: %s", line)
		}
	}
	var s durations
	for b.Loop() {
		t0 := time.Now()
		call()
		s = append(s, time.Since(t0))
	}
	s.report(b, "µs", time.Microsecond)
}

// TestPluginLatency measures, on the built binary, what hosts pay for
// plugins: `nexus mcp` from process start to the tools/list answer with
// five plugins declared (plus the built-in store), and one `nexus hook`
// PreToolUse process with one subscribed plugin (through the warm hook
// server, and in-process for reference) and with none. And how plugins
// that misbehave or stop cost: start to tools/list beside a hung plugin
// (1 s start deadline; budget: the deadline + 150 ms), a cancelled call's
// notification to the plugin's context ending (50 ms), and `nexus mcp`'s
// exit with a plugin with and without go-plugin's GRPCController. Medians are checked
// against the budgets (150 ms; 15 ms; a hook without subscribers within
// 10% + 0.3 ms of the plain hook). It runs only
// with NEXUS_BENCH_PLUGINS=1: scripts/bench-plugins.sh sets it.
func TestPluginLatency(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_PLUGINS") == "" {
		t.Skip("set NEXUS_BENCH_PLUGINS=1 (scripts/bench-plugins.sh) to measure plugin latency")
	}
	runs := 100
	if n, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	f := newPluginFixture(t)
	env := f.env(t)

	// Five plugins with tools (copies of the test plugin, each its own
	// executable as a real installation would have).
	five := f.project(t, "")
	for i := 1; i <= 5; i++ {
		exe := filepath.Join(t.TempDir(), fmt.Sprintf("plugin%d", i))
		data, err := os.ReadFile(f.testplugin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		installPlugin(t, five, fmt.Sprintf("p%d", i), exe, tpTools)
	}
	// toolsList times `nexus mcp` in dir from start to its tools/list
	// answer, and checks the answer with ok.
	listRequest := rpc(1, "tools/list", nil)
	toolsList := func(dir, what string, ok func(line string) bool) time.Duration {
		cmd := exec.Command(f.nexus, "mcp")
		cmd.Dir, cmd.Env = dir, env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(in, listRequest)
		line, err := bufio.NewReader(out).ReadString('\n')
		d := time.Since(t0)
		in.Close()
		cmd.Wait()
		if err != nil || !ok(line) {
			t.Fatalf("%s: %v %.300s", what, err, line)
		}
		return d
	}
	mcpStart := func() time.Duration {
		return toolsList(five, "tools/list", func(line string) bool {
			return strings.Contains(line, `"p5_echo"`) && strings.Contains(line, `"check_decision"`)
		})
	}

	// Hooks: shellguard subscribes to PreToolUse of Bash.
	guarded := f.project(t, "gate:\n  unplanned_edit: off\n")
	installShellguard(t, guarded, f.shellguard)
	plain := f.project(t, "gate:\n  unplanned_edit: off\n")
	t.Cleanup(func() { killHookServers(t, guarded) })
	payloadFile := func(proj, tool, command string) string {
		b := payload(t, map[string]any{"hook_event_name": "PreToolUse", "cwd": proj, "agent_id": "e1", "agent_type": "engineer",
			"tool_name": tool, "tool_input": map[string]any{"command": command, "file_path": filepath.Join(proj, "x.go")}})
		p := filepath.Join(t.TempDir(), "payload.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type probe struct {
		name   string
		run    func() time.Duration
		budget time.Duration
		walls  durations
	}
	hookProbe := func(name string, proj string, env []string, file string, wantDeny bool, budget time.Duration) *probe {
		run := func() time.Duration {
			in, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd := exec.Command(f.nexus, "hook", "--host", "claude")
			cmd.Dir, cmd.Env, cmd.Stdin = proj, env, in
			var out strings.Builder
			cmd.Stdout = &out
			t0 := time.Now()
			err = cmd.Run()
			d := time.Since(t0)
			if err != nil || strings.Contains(out.String(), `"deny"`) != wantDeny {
				t.Fatalf("%s: %v %q", name, err, out.String())
			}
			return d
		}
		return &probe{name: name, run: run, budget: budget}
	}
	inProcess := f.env(t, "NEXUS_PLUGINS_HOOK_SERVER=false")

	// One plugin that never answers the handshake (start_timeout 1s) beside
	// a working one: start to tools/list, which must not wait longer than
	// the hung plugin's deadline plus 150 ms.
	hungProj := f.project(t, "")
	hungExe := filepath.Join(t.TempDir(), "hung.sh")
	if err := os.WriteFile(hungExe, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	installPlugin(t, hungProj, "hung", hungExe, "start_timeout: 1s\ntools:\n  - {name: nap, capability_classes: []}\n")
	installPlugin(t, hungProj, "p1", f.testplugin, tpTools)
	mcpHung := func() time.Duration {
		return toolsList(hungProj, "tools/list with a hung plugin", func(line string) bool {
			return strings.Contains(line, `"p1_echo"`) && !strings.Contains(line, `"hung_nap"`)
		})
	}

	// A cancelled slow call: from notifications/cancelled to the plugin
	// seeing its context end (the test plugin prints the moment).
	cancelProj := f.project(t, "decisions:\n  enabled: false\n")
	installPlugin(t, cancelProj, "tp", f.testplugin, tpTools)
	cs := startMCP(t, f.nexus, cancelProj, env)
	cs.toolNames()
	cancelled := 0
	cancelLag := func() time.Duration {
		cancelled++
		marker := fmt.Sprintf("bench-%d", cancelled)
		args, started := blockArgs(t, marker)
		id := cs.send("tools/call", map[string]any{"name": "tp_block", "arguments": args})
		plugintest.WaitStarted(t, started)
		sent := time.Now()
		cs.notify("notifications/cancelled", map[string]any{"requestId": id})
		re := regexp.MustCompile(`"text":"` + marker + `"\} ended at (\d+)`)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if m := re.FindStringSubmatch(cs.stderr.String()); m != nil {
				at, _ := strconv.ParseInt(m[1], 10, 64)
				return time.Unix(0, at).Sub(sent)
			}
		}
		t.Fatalf("call %d was never cancelled in the plugin", id)
		return 0
	}

	// nexus mcp's exit after end of input with a plugin that speaks the
	// documented protocol by hand, serving go-plugin's GRPCController or
	// not (then it gets SIGTERM; before, each exit waited 2 s).
	bare := install(t, t.TempDir(), "bareplugin")
	mcpExit := func(controller string) func() time.Duration {
		proj := f.project(t, "decisions:\n  enabled: false\n")
		installPlugin(t, proj, "bare", bare, "env: [BARE_CONTROLLER]\ntools:\n  - {name: pid, capability_classes: []}\n  - {name: wait, capability_classes: []}\n")
		return func() time.Duration {
			s := startMCP(t, f.nexus, proj, append(slices.Clone(env), "BARE_CONTROLLER="+controller))
			if names := s.toolNames(); !slices.Contains(names, "bare_pid") {
				t.Fatalf("tools/list: %v", names)
			}
			t0 := time.Now()
			s.closeStdin()
			return time.Since(t0)
		}
	}

	probes := []*probe{
		{name: "nexus mcp: start to tools/list, 5 plugins + store", run: mcpStart, budget: 150 * time.Millisecond},
		hookProbe("PreToolUse Bash, 1 subscriber, hook server (deny)", guarded, env, payloadFile(guarded, "Bash", "rm -rf /"), true, 15*time.Millisecond),
		hookProbe("PreToolUse Bash, 1 subscriber, hook server (allow)", guarded, env, payloadFile(guarded, "Bash", "go test ./..."), false, 15*time.Millisecond),
		hookProbe("PreToolUse Read, plugin installed, no subscriber", guarded, env, payloadFile(guarded, "Read", ""), false, 0),
		hookProbe("(reference) PreToolUse Bash, no plugins (plain hook)", plain, env, payloadFile(plain, "Bash", "go test ./..."), false, 0),
		hookProbe("(reference) PreToolUse Bash, 1 subscriber, in-process", guarded, inProcess, payloadFile(guarded, "Bash", "rm -rf /"), true, 0),
		{name: "hung plugin (1s deadline) + 1: mcp start to tools/list", run: mcpHung, budget: time.Second + 150*time.Millisecond},
		{name: "cancelled call: notification to the plugin's ctx.Done", run: cancelLag, budget: 50 * time.Millisecond},
		{name: "nexus mcp exit, plugin with GRPCController", run: mcpExit("1"), budget: 500 * time.Millisecond},
		{name: "nexus mcp exit, plugin without GRPCController", run: mcpExit("0"), budget: 500 * time.Millisecond},
	}
	// Warm-up: digest cache filled, hook server started and its plugin warm.
	for i := 0; i < 5; i++ {
		for _, p := range probes {
			if strings.HasPrefix(p.name, "hung plugin") && i > 0 {
				continue
			}
			p.run()
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < runs; i++ {
		for _, p := range probes {
			if strings.HasPrefix(p.name, "nexus mcp") && i%3 != 0 {
				continue // a third of the rounds: each start costs ~6 processes
			}
			if strings.HasPrefix(p.name, "hung plugin") && i%5 != 0 {
				continue // each run waits the full second
			}
			p.walls = append(p.walls, p.run())
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	var b strings.Builder
	fmt.Fprintf(&b, "plugin latency, wall time per process (load average: %s)\n", strings.TrimSpace(string(load)))
	fmt.Fprintf(&b, "%-58s %5s %9s %9s %9s %7s\n", "case", "runs", "median", "p90", "min", "budget")
	for _, p := range probes {
		budget := "-"
		if p.budget > 0 {
			budget = p.budget.String()
		}
		fmt.Fprintf(&b, "%-58s %5d %9s %9s %9s %7s\n", p.name, len(p.walls), ms(p.walls.quantile(0.5)), ms(p.walls.quantile(0.9)), ms(p.walls.quantile(0)), budget)
	}
	t.Log("\n" + b.String())
	for _, p := range probes {
		printBenchResult("BenchmarkPluginLatency", p.name, len(p.walls), "ms-median", p.walls.quantile(0.5), "ms-p90", p.walls.quantile(0.9), "ms-min", p.walls.quantile(0))
	}
	for _, p := range probes {
		if p.budget > 0 && p.walls.quantile(0.5) > p.budget {
			t.Errorf("%s: median %s over the %s budget", p.name, ms(p.walls.quantile(0.5)), p.budget)
		}
	}
	// A hook no plugin subscribed to costs what the plain hook costs (whose
	// own 5 ms budget scripts/bench-hooks.sh checks): within 10% + 0.3 ms.
	none, base := probes[3].walls.quantile(0.5), probes[4].walls.quantile(0.5)
	if none > base+base/10+300*time.Microsecond {
		t.Errorf("a hook without subscribers takes %s, the plain hook %s", ms(none), ms(base))
	}
}
