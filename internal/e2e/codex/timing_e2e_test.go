//go:build e2e

package codex

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// timingScript is the session every timing run plays: a prompt, one shell
// command, an answer (nothing that needs nexus, so the same script will
// time a session with nexus installed against one without).
func timingScript() *fr.Server {
	return fr.New(
		fr.Turn{Name: "shell", When: fr.Prompt("e2e: codex timing"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("call_ls", "exec_command", map[string]any{"cmd": "ls"})}}},
		fr.Turn{Name: "answer", When: fr.After("call_ls"), Reply: fr.Reply{Text: "Timed."}},
	)
}

// TestE2ECodexTiming measures the wall time of a scripted `codex exec`
// session (prompt, shell command, answer) against the fake API: bare, and
// with a trusted logging command hook on every event plus nexus mcp as an
// MCP server (what a harness adds, minus its own work), alternating,
// NEXUS_E2E_CODEX_TIMING_RUNS times each (default 5). It prints the
// medians and appends them to $NEXUS_E2E_FIGURES when set. It runs before
// the parallel sessions of this package.
func TestE2ECodexTiming(t *testing.T) {
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("NEXUS_E2E_CODEX_TIMING_RUNS")); err == nil && v > 0 {
		runs = v
	}
	var bare, hooked []time.Duration
	play := func(o sessionOpts) time.Duration {
		api := timingScript()
		defer api.Close()
		s := newSession(t, api, o)
		r := s.run("e2e: codex timing")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("scripted turns never reached: %v", u)
		}
		if o.hooks && len(s.hooks()) == 0 {
			t.Fatal("no hook ran in the hooked session")
		}
		return r.wall
	}
	for range runs {
		bare = append(bare, play(sessionOpts{}))
		hooked = append(hooked, play(sessionOpts{hooks: true, mcp: true}))
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	all := func(ds []time.Duration) string {
		var s []string
		for _, d := range ds {
			s = append(s, strconv.Itoa(int(d/time.Millisecond)))
		}
		return strings.Join(s, " ")
	}
	lines := []string{
		fmt.Sprintf("codex exec scripted session (prompt, shell command, answer), median of %d, %s:", runs, time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  bare                               %s (runs: %s ms)", ms(e2ekit.Median(bare)), all(bare)),
		fmt.Sprintf("  logging hook on 12 events + MCP    %s (runs: %s ms)", ms(e2ekit.Median(hooked)), all(hooked)),
	}
	e2ekit.Figures(t, strings.Join(lines, "\n")+"\n")
}
