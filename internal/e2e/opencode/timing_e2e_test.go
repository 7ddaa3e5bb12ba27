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
				prompt, turns := readTurns(calls)
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

// readTurns scripts a session of n sequential read calls of f.txt, then
// an answer; it returns the prompt that starts it.
func readTurns(n int) (string, []fc.Turn) {
	prompt := fmt.Sprintf("timing: %d reads", n)
	var turns []fc.Turn
	when := fc.Prompt(prompt)
	for c := 0; c < n; c++ {
		id := fmt.Sprintf("call_read_%d", c)
		turns = append(turns, fc.Turn{Name: id, When: when, Reply: fc.Reply{Calls: []fc.Call{{ID: id, Name: "read", Args: map[string]any{"filePath": "f.txt"}}}}})
		when = fc.After(id)
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
