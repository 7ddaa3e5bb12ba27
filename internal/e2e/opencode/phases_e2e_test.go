//go:build e2e

package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ocsetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
	fc "github.com/nexus-harness/nexus/internal/fakechat"
)

// logLine is one line of `opencode run --print-logs`: its time and message.
var logLine = regexp.MustCompile(`^timestamp=(\S+) .*?message=("[^"]*"|\S+)`)

// phaseMarks are the log messages that end each phase of a scripted
// session, in order: process start, configuration read and plugins loaded
// ("init"), the session created, the first loop step, the first model call
// (after the MCP servers connected), the last loop step, dispose, and the
// process's exit (END).
var phaseMarks = []string{"creating instance", "bootstrapping", "init", "created", "loop", "process", "exiting loop", "disposing instance", "END"}

// BenchmarkOpenCodeSessionPhases says where the time nexus adds to a
// scripted `opencode run` goes: the session of TestE2EOpenCodeTiming,
// without nexus, with it installed, and with one part of the install alone
// (the plugin; the MCP servers; the agents and skills), each run b.N times
// alternately with --print-logs. It logs the median of each phase (from
// the previous mark to OpenCode's log line) per setup and reports each
// setup's added median.
// go test -tags e2e -run '^$' -bench OpenCodeSessionPhases -benchtime 9x ./internal/e2e/opencode
func BenchmarkOpenCodeSessionPhases(b *testing.B) {
	const prompt = "timing: one bash call"
	api := fc.New(
		fc.Turn{Name: "bash", When: fc.Prompt(prompt), Repeat: true, Reply: fc.Reply{Calls: []fc.Call{{ID: "call_t", Name: "bash", Args: map[string]any{"command": "true", "description": "Nothing"}}}}},
		fc.Turn{Name: "final", When: fc.After("call_t"), Repeat: true, Reply: fc.Reply{Text: "Done."}},
	)
	defer api.Close()
	bare := newSession(b, api, sessionOpts{noMCP: true})
	noMCP, err := os.ReadFile(filepath.Join(bare.proj, "opencode.json"))
	if err != nil {
		b.Fatal(err)
	}
	part := func(plugin, mcp bool) *session {
		s := newSession(b, api, sessionOpts{nexus: true})
		if !plugin {
			if err := os.Remove(filepath.Join(s.proj, ".opencode", ocsetup.PluginPath)); err != nil {
				b.Fatal(err)
			}
		}
		if !mcp {
			writeFile(b, filepath.Join(s.proj, "opencode.json"), noMCP)
		}
		return s
	}
	names := []string{"bare", "nexus", "plugin", "mcp", "files"}
	sessions := []*session{bare, part(true, true), part(true, false), part(false, true), part(false, false)}
	for _, s := range sessions {
		s.run(prompt, "--title", "timing")
	}
	phases := make([]map[string][]time.Duration, len(sessions))
	for i := range phases {
		phases[i] = map[string][]time.Duration{}
	}
	b.ResetTimer()
	for range b.N {
		for j, s := range sessions {
			start := time.Now()
			r := s.run(prompt, "--title", "timing", "--print-logs")
			end := start.Add(r.wall)
			at := map[string]time.Time{"END": end}
			for _, line := range strings.Split(r.stderr, "\n") {
				m := logLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				msg := strings.Trim(m[2], `"`)
				if _, seen := at[msg]; seen {
					continue
				}
				if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					at[msg] = ts
				}
			}
			prev := start
			for _, mark := range phaseMarks {
				if ts, ok := at[mark]; ok {
					phases[j][mark] = append(phases[j][mark], ts.Sub(prev))
					prev = ts
				}
			}
			phases[j]["TOTAL"] = append(phases[j]["TOTAL"], r.wall)
		}
	}
	b.StopTimer()
	var t strings.Builder
	fmt.Fprintf(&t, "median ms per phase (ends at the log line), %d runs each\n%-20s", b.N, "phase")
	for _, n := range names {
		fmt.Fprintf(&t, "%9s", n)
	}
	for _, mark := range append(slices.Clone(phaseMarks), "TOTAL") {
		fmt.Fprintf(&t, "\n%-20s", mark)
		for j := range names {
			fmt.Fprintf(&t, "%9.0f", ms(median(phases[j][mark])))
		}
	}
	b.Log("\n" + t.String())
	base := median(phases[0]["TOTAL"])
	for j, n := range names[1:] {
		b.ReportMetric(ms(median(phases[j+1]["TOTAL"])-base), "ms-added-"+n)
	}
}
