//go:build e2e

package opencode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ocsetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fc "github.com/nexus-harness/nexus/internal/fakechat"
)

// The test binary doubles as the program the timing plugin asks: with
// echoOnceArg it answers one JSON line and exits (a process per call, as a
// `nexus hook` would), with echoServeArg it answers every line until its
// standard input closes (a long-lived child).
const (
	echoOnceArg  = "-oc-e2e-echo-once"
	echoServeArg = "-oc-e2e-echo-serve"
)

func echoOnce() int {
	line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return 1
	}
	return answer(os.Stdout, line)
}

func echoServe() int {
	r := bufio.NewReader(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if code := answer(w, line); code != 0 {
				return code
			}
			w.Flush()
		}
		if err != nil {
			return 0
		}
	}
}

// answer decodes a request line as a hook would and writes an allow.
func answer(w interface{ Write([]byte) (int, error) }, line []byte) int {
	var req struct {
		Hook string          `json:"hook"`
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(w, "{\"decision\":\"allow\",\"tool\":%q}\n", req.Tool)
	return 0
}

func median(ds []time.Duration) time.Duration { return e2ekit.Median(ds) }

// p90 is the nearest-rank 90th percentile.
func p90(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)*9+9)/10-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkOpenCodeSession: the wall time of a scripted `opencode run`
// (a prompt, one bash call, an answer; the title request alongside) in a
// warm project, without a plugin and with a trivial one, the two run
// alternately b.N times each after a warm-up run. It reports the medians.
// go test -tags e2e -run '^$' -bench OpenCodeSession -benchtime 5x ./internal/e2e/opencode
func BenchmarkOpenCodeSession(b *testing.B) {
	const prompt = "timing: one bash call"
	api := fc.New(
		fc.Turn{Name: "bash", When: fc.Prompt(prompt), Repeat: true, Reply: fc.Reply{Calls: []fc.Call{{ID: "call_t", Name: "bash", Args: map[string]any{"command": "true", "description": "Nothing"}}}}},
		fc.Turn{Name: "final", When: fc.After("call_t"), Repeat: true, Reply: fc.Reply{Text: "Done."}},
	)
	defer api.Close()
	bare := newSession(b, api, sessionOpts{noMCP: true})
	plug := newSession(b, api, sessionOpts{noMCP: true, plugins: []string{"timing.js"}, env: []string{"OC_TIMING_MODE=trivial"}})
	bare.run(prompt)
	plug.run(prompt)
	var walls [2][]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, s := range []*session{bare, plug} {
			walls[j] = append(walls[j], s.run(prompt).wall)
		}
	}
	b.StopTimer()
	mb, mp := median(walls[0]), median(walls[1])
	b.ReportMetric(ms(mb), "ms-median-bare")
	b.ReportMetric(ms(mp), "ms-median-plugin")
	b.ReportMetric(ms(mp-mb), "ms-added")
	b.Logf("bare %v, with a trivial plugin %v", walls[0], walls[1])
}

// BenchmarkOpenCodeToolHook: what tool.execute.before costs per tool call
// when the plugin asks an outside program, measured inside the plugin over
// a session of 100 sequential read calls: a process per call (node spawn,
// Bun.spawn; the Go test binary as the program, and the static nexus
// binary's `nexus version` for a process that does a little more), a
// long-lived child over pipes read through the event loop (stdio) or over
// FIFOs read synchronously (fifosync, fifopoll), one event-loop turn
// (yield), and the bare hook (trivial). It reports the median
// per call and the session's wall time.
// go test -tags e2e -run '^$' -bench OpenCodeToolHook -benchtime 1x ./internal/e2e/opencode
func BenchmarkOpenCodeToolHook(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	const calls = 100
	modes := []struct {
		name, mode string
		cmd        []string
	}{
		{"trivial", "trivial", nil},
		{"yield", "yield", nil},
		{"stdio", "stdio", []string{self, echoServeArg}},
		{"fifosync", "fifosync", []string{self, echoServeArg}},
		{"fifopoll", "fifopoll", []string{self, echoServeArg}},
		{"spawn", "spawn", []string{self, echoOnceArg}},
		{"bunspawn", "bunspawn", []string{self, echoOnceArg}},
		{"spawn-nexus-version", "spawn", []string{filepath.Join(binDir, "nexus"), "version"}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			var perCall, walls []time.Duration
			for i := 0; i < b.N; i++ {
				prompt, turns := readTurns(calls, 1)
				api := fc.New(turns...)
				log := filepath.Join(b.TempDir(), "timing.log")
				cmd, _ := json.Marshal(m.cmd)
				s := newSession(b, api, sessionOpts{noMCP: true, plugins: []string{"timing.js"}, env: []string{"OC_TIMING_MODE=" + m.mode, "OC_TIMING_LOG=" + log, "OC_TIMING_CMD=" + string(cmd)}})
				writeFile(b, filepath.Join(s.proj, "f.txt"), []byte("x\n"))
				walls = append(walls, s.run(prompt, "--title", "timing").wall)
				api.Close()
				if u := api.Unused(); len(u) > 0 {
					b.Fatalf("turns never reached: %v", u[:min(3, len(u))])
				}
				got := readTimingLog(b, log)
				if len(got) != calls {
					b.Fatalf("%d hook timings, want %d", len(got), calls)
				}
				perCall = append(perCall, got...)
			}
			b.ReportMetric(float64(median(perCall))/float64(time.Microsecond), "µs-median/call")
			b.ReportMetric(float64(p90(perCall))/float64(time.Microsecond), "µs-p90/call")
			b.ReportMetric(ms(median(walls)), "ms-session")
		})
	}
}

// readTurns scripts a session of n read calls, of f.txt when batch is 1,
// else of f<i>.txt (identical calls in a row are OpenCode's "doom loop",
// which opencode run refuses), batch calls per model turn (OpenCode runs a turn's calls one after the other through the
// plugin's synchronous hook; fewer turns spare the model round trips),
// then an answer; it returns the prompt that starts it.
func readTurns(n, batch int) (string, []fc.Turn) {
	prompt := fmt.Sprintf("timing: %d reads", n)
	var turns []fc.Turn
	when := fc.Prompt(prompt)
	for c := 0; c < n; c += batch {
		var calls []fc.Call
		for i := c; i < min(n, c+batch); i++ {
			file := "f.txt"
			if batch > 1 {
				file = fmt.Sprintf("f%d.txt", i)
			}
			calls = append(calls, fc.Call{ID: fmt.Sprintf("call_read_%d", i), Name: "read", Args: map[string]any{"filePath": file}})
		}
		name := fmt.Sprintf("reads_%d", c)
		turns = append(turns, fc.Turn{Name: name, When: when, Reply: fc.Reply{Calls: calls}})
		when = fc.After(calls[len(calls)-1].ID)
	}
	return prompt, append(turns, fc.Turn{Name: "final", When: when, Reply: fc.Reply{Text: "Done."}})
}

func readTimingLog(b *testing.B, path string) []time.Duration {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("the timing plugin wrote no log: %v", err)
	}
	var out []time.Duration
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		ns, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			b.Fatalf("timing log line %q", line)
		}
		out = append(out, time.Duration(ns))
	}
	return out
}

// TestE2EOpenCodeTiming measures what nexus adds to OpenCode: the wall time
// of a scripted `opencode run` (prompt, one bash call, answer; the title
// request skipped) without nexus and with nexus installed (`nexus install
// opencode`: the plugin and its long-lived child, the nexus and nauro MCP
// servers, the agents and skills), alternating in one run,
// NEXUS_E2E_OPENCODE_TIMING_RUNS times each (default 5) after a warm-up
// of each; and the time tool.execute.before takes per call through the
// installed plugin with the real engine behind it, over 100 sequential
// read calls. It prints the medians and appends them to
// $NEXUS_E2E_FIGURES. It runs before the package's parallel sessions.
func TestE2EOpenCodeTiming(t *testing.T) {
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("NEXUS_E2E_OPENCODE_TIMING_RUNS")); err == nil && v > 0 {
		runs = v
	}
	const prompt = "timing: one bash call"
	script := func() *fc.Server {
		return fc.New(
			fc.Turn{Name: "bash", When: fc.Prompt(prompt), Repeat: true, Reply: fc.Reply{Calls: []fc.Call{{ID: "call_t", Name: "bash", Args: map[string]any{"command": "true", "description": "Nothing"}}}}},
			fc.Turn{Name: "final", When: fc.After("call_t"), Repeat: true, Reply: fc.Reply{Text: "Done."}},
		)
	}
	api := script()
	defer api.Close()
	bare := newSession(t, api, sessionOpts{noMCP: true})
	with := newSession(t, api, sessionOpts{nexus: true})
	bare.run(prompt, "--title", "timing")
	with.run(prompt, "--title", "timing")
	if got := api.Chats()[len(api.Chats())-2].Chat.FirstUserText(); !strings.Contains(got, "nexus is active for this project") {
		t.Fatalf("nexus did not run in the timed session: %.200q", got)
	}
	sessions := []*session{bare, with}
	split := os.Getenv("NEXUS_E2E_TIMING_SPLIT") == "1"
	if split {
		// nexus's plugin alone (no MCP servers), and its MCP servers alone
		// (no plugin).
		pluginOnly := newSession(t, api, sessionOpts{nexus: true})
		cfg, err := os.ReadFile(filepath.Join(bare.proj, "opencode.json"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(pluginOnly.proj, "opencode.json"), cfg)
		mcpOnly := newSession(t, api, sessionOpts{nexus: true})
		if err := os.Remove(filepath.Join(mcpOnly.proj, ".opencode", ocsetup.PluginPath)); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, pluginOnly, mcpOnly)
	}
	walls := make([][]time.Duration, len(sessions))
	for range runs {
		for j, s := range sessions {
			walls[j] = append(walls[j], s.run(prompt, "--title", "timing").wall)
		}
	}
	perCall, wall := pluginPerCall(t, 100)
	all := func(ds []time.Duration) string {
		var s []string
		for _, d := range ds {
			s = append(s, strconv.Itoa(int(d/time.Millisecond)))
		}
		return strings.Join(s, " ")
	}
	mb, mw := median(walls[0]), median(walls[1])
	lines := []string{
		fmt.Sprintf("opencode run scripted session (prompt, bash, answer), median of %d, %s:", runs, time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  without nexus              %s (runs: %s ms)", e2ekit.Ms(mb), all(walls[0])),
		fmt.Sprintf("  with nexus                 %s (runs: %s ms), added %s (target ≤ +150 ms)", e2ekit.Ms(mw), all(walls[1]), e2ekit.Ms(mw-mb)),
	}
	if split {
		lines = append(lines,
			fmt.Sprintf("  nexus's plugin alone       %s (runs: %s ms), added %s", e2ekit.Ms(median(walls[2])), all(walls[2]), e2ekit.Ms(median(walls[2])-mb)),
			fmt.Sprintf("  nexus's MCP servers alone  %s (runs: %s ms), added %s", e2ekit.Ms(median(walls[3])), all(walls[3]), e2ekit.Ms(median(walls[3])-mb)))
	}
	lines = append(lines,
		fmt.Sprintf("  tool.execute.before through the plugin, real engine: median %.2f ms, p90 %.2f ms over %d calls (target median ≤ 2 ms); session %s",
			ms(median(perCall)), ms(p90(perCall)), len(perCall), e2ekit.Ms(wall)))
	e2ekit.Figures(t, strings.Join(lines, "\n")+"\n")
}
