//go:build e2e

package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// timeHooks rewrites the project's Claude Code settings so every nexus hook
// runs under hookTimer, logging to the returned file.
func timeHookProcesses(s *session) string {
	s.T.Helper()
	self, err := os.Executable()
	if err != nil {
		s.T.Fatal(err)
	}
	log := filepath.Join(s.T.TempDir(), "hook-times")
	path := filepath.Join(s.Proj, ".claude", "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.T.Fatal(err)
	}
	nexus := filepath.Join(binDir, "nexus")
	out := strings.ReplaceAll(string(b), `"command": "`+nexus+` hook`, `"command": "`+self+` `+e2ekit.HookTimerArg+` `+log+` `+nexus+` hook`)
	if out == string(b) {
		s.T.Fatalf("no nexus hook command to wrap in %s", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		s.T.Fatal(err)
	}
	return log
}

// hookTimes reads a hook timer log: the sum of the hooks' wall times and
// the number of hook processes.
func hookTimes(t *testing.T, log string) (time.Duration, int) {
	t.Helper()
	var sum time.Duration
	n := 0
	for _, ds := range e2ekit.HookTimes(t, log) {
		sum += e2ekit.Sum(ds)
		n += len(ds)
	}
	return sum, n
}

// timingScript is the session every timing run plays: a prompt, a Read,
// a Bash command and an answer (nothing that needs nexus, so the same
// script runs without it).
func timingScript() *fa.Server {
	return fa.New(
		fa.Turn{Name: "read", When: fa.Prompt("e2e: timing"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_read", Name: "Read", Input: map[string]any{"file_path": "README.md"}}}}},
		fa.Turn{Name: "bash", When: fa.After("toolu_read"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_bash", Name: "Bash", Input: map[string]any{"command": "ls", "description": "list"}}}}},
		fa.Turn{Name: "final", When: fa.After("toolu_bash"), Reply: fa.Reply{Text: "Timed."}},
	)
}

// TestE2ETiming measures what nexus adds to a scripted `claude -p` session:
// the same script without nexus, with nexus, with nexus and every hook
// timed, and (NEXUS_E2E_TIMING_SPLIT=1) with nexus's hooks but not its MCP
// server, alternating, NEXUS_E2E_TIMING_RUNS times each (default 3). It
// prints the medians and appends them to $NEXUS_E2E_FIGURES when set
// (scripts/e2e/run.sh prints that file at the end). It runs before the
// parallel sessions, alone in this package.
func TestE2ETiming(t *testing.T) {
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("NEXUS_E2E_TIMING_RUNS")); err == nil && v > 0 {
		runs = v
	}
	// The variant without nexus's MCP server only splits the added time
	// further; make e2e leaves it out to stay within its time budget.
	split := os.Getenv("NEXUS_E2E_TIMING_SPLIT") == "1"
	var without, with, hooksOnly, hooks []time.Duration
	hookCount := 0
	play := func(o sessionOpts, timeHooks bool) (time.Duration, string) {
		api := timingScript()
		defer api.Close()
		s := newSession(t, api, o)
		if err := os.WriteFile(filepath.Join(s.Proj, "README.md"), []byte("# timing\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if o.NoMCP {
			// nexus install claude wrote .mcp.json with the nexus server only.
			if err := os.Remove(filepath.Join(s.Proj, ".mcp.json")); err != nil {
				t.Fatal(err)
			}
		}
		log := ""
		if timeHooks {
			log = timeHookProcesses(s)
		}
		r := s.Run("e2e: timing")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("scripted turns never reached: %v", u)
		}
		return r.Wall, log
	}
	for range runs {
		w, _ := play(sessionOpts{NoNexus: true}, false)
		without = append(without, w)
		w, _ = play(sessionOpts{}, false)
		with = append(with, w)
		if split {
			w, _ = play(sessionOpts{NoMCP: true}, false)
			hooksOnly = append(hooksOnly, w)
		}
		_, log := play(sessionOpts{}, true)
		sum, n := hookTimes(t, log)
		hooks = append(hooks, sum)
		hookCount = n
	}
	added := e2ekit.Median(with) - e2ekit.Median(without)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	lines := []string{
		fmt.Sprintf("claude -p scripted session (prompt, Read, Bash, answer), median of %d, %s:", runs, time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  without nexus           %s", ms(e2ekit.Median(without))),
		fmt.Sprintf("  with nexus              %s (added %s)", ms(e2ekit.Median(with)), ms(added)),
		fmt.Sprintf("  nexus hooks, summed     %s over %d hook processes", ms(e2ekit.Median(hooks)), hookCount),
	}
	if split {
		lines = slices.Insert(lines, 3, fmt.Sprintf("  nexus hooks, no MCP     %s (added %s)", ms(e2ekit.Median(hooksOnly)), ms(e2ekit.Median(hooksOnly)-e2ekit.Median(without))))
	}
	// Medians of different runs: the ratio is a guide, not an identity.
	if added > 0 {
		lines = append(lines, fmt.Sprintf("  hooks summed / added    %.0f%%", 100*float64(e2ekit.Median(hooks))/float64(added)))
	}
	report := strings.Join(lines, "\n") + "\n"
	t.Log("\n" + report)
	fmt.Print(report)
	if path := os.Getenv("NEXUS_E2E_FIGURES"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(report); err != nil {
			t.Fatal(err)
		}
	}
}
