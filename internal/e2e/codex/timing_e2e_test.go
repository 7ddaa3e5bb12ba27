//go:build e2e

package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	codexhost "github.com/nexus-harness/nexus/harness/host/codex"
	codexsetup "github.com/nexus-harness/nexus/harness/host/codex/setup"
	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// timingScript is the session every timing run plays: a prompt, one shell
// command, an answer (nothing that needs nexus, so the same script times a
// session with nexus installed against one without).
func timingScript() *fr.Server {
	return fr.New(
		fr.Turn{Name: "shell", When: fr.Prompt("e2e: codex timing"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("call_ls", "exec_command", map[string]any{"cmd": "ls"})}}},
		fr.Turn{Name: "answer", When: fr.After("call_ls"), Reply: fr.Reply{Text: "Timed."}},
	)
}

// timedScript adds a subagent to timingScript, so that every event nexus
// handles runs under the hook timer (SubagentStart and SubagentStop too).
func timedScript(t *testing.T) *fr.Server {
	eng := isRole("engineer")
	return fr.New(
		fr.Turn{Name: "shell", When: fr.All(lead, fr.Prompt("e2e: codex timing")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("call_ls", "exec_command", map[string]any{"cmd": "ls"})}}},
		fr.Turn{Name: "search", When: fr.All(lead, fr.After("call_ls")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "spawn agent wait", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(lead, fr.After("c_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_spawn", ns, "spawn_agent", map[string]any{"agent_type": "engineer", "message": "e2e timing engineer"})}}},
		fr.Turn{Name: "eng", When: fr.All(eng, fr.Prompt("e2e timing engineer")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("e_ls", "exec_command", map[string]any{"cmd": "ls"})}}},
		fr.Turn{Name: "eng-done", When: fr.All(eng, fr.After("e_ls")), Reply: fr.Reply{Text: "Listed."}},
		fr.Turn{Name: "wait", When: fr.All(lead, fr.After("c_spawn")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_wait", ns, "wait_agent", map[string]any{"targets": []string{spawnedID(t, r, "c_spawn")}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "answer", When: fr.All(lead, fr.After("c_wait")), Reply: fr.Reply{Text: "Timed."}},
	)
}

// timeHooks wraps every nexus hook command of the project's hooks.json in
// the test binary's hook timer (e2ekit.HookTimerArg) and records the trust
// of the wrapped commands, as --trust-hooks would; it returns the timer's
// log.
func (s *session) timeHooks() string {
	s.t.Helper()
	self, err := os.Executable()
	if err != nil {
		s.t.Fatal(err)
	}
	log := filepath.Join(s.root, "hook-times")
	path := filepath.Join(s.proj, ".codex", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	nexus := filepath.Join(binDir, "nexus")
	out := strings.ReplaceAll(string(b), `"command": "`+nexus+` hook`, `"command": "`+self+` `+e2ekit.HookTimerArg+` `+log+` `+nexus+` hook`)
	if out == string(b) {
		s.t.Fatalf("no nexus hook command to wrap in %s", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		s.t.Fatal(err)
	}
	hooks, err := codexhost.NexusHooks(path, []byte(out))
	if err != nil {
		s.t.Fatal(err)
	}
	var trust []codexsetup.TrustEntry
	for _, h := range hooks {
		trust = append(trust, codexsetup.TrustEntry{Key: h.Key, Hash: h.Hash})
	}
	cfg := filepath.Join(s.codex, codexsetup.ConfigFile)
	cur, err := os.ReadFile(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	res, err := codexsetup.EditConfig(cur, codexsetup.ConfigEdit{Trust: trust})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(cfg, res.Data, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return log
}

// TestE2ECodexTiming measures what nexus adds to a scripted `codex exec`
// session (prompt, shell command, answer) against the fake API: the same
// script without nexus and with nexus installed (`nexus install codex
// --trust-hooks`: its hooks and its MCP servers), alternating in one run,
// NEXUS_E2E_CODEX_TIMING_RUNS times each (default 5), and the wall time of
// each nexus hook process by event, from a third session per run (the
// script with a subagent added) whose hooks run under a timer. With NEXUS_E2E_TIMING_SPLIT=1 it also times
// nexus's hooks without its MCP servers. It prints the medians and appends
// them to $NEXUS_E2E_FIGURES. It runs before the package's parallel
// sessions.
func TestE2ECodexTiming(t *testing.T) {
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("NEXUS_E2E_CODEX_TIMING_RUNS")); err == nil && v > 0 {
		runs = v
	}
	split := os.Getenv("NEXUS_E2E_TIMING_SPLIT") == "1"
	var bare, with, hooksOnly, oneServer []time.Duration
	// Where a session's time goes: from the start of codex to its first
	// model request, and from its last one to its exit, per variant.
	phases := map[string][2][]time.Duration{}
	perEvent := map[string][]time.Duration{}
	var processes []int
	play := func(name string, o sessionOpts, noMCP, timed bool) time.Duration {
		api := timingScript()
		if timed {
			api = timedScript(t)
		}
		defer api.Close()
		s := newSession(t, api, o)
		if noMCP {
			if err := os.Remove(filepath.Join(s.proj, ".codex", "config.toml")); err != nil {
				t.Fatal(err)
			}
		}
		log := ""
		if timed {
			log = s.timeHooks()
		}
		r := s.run("e2e: codex timing")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("scripted turns never reached: %v", u)
		}
		if reqs := api.Responses(); len(reqs) > 0 && !timed {
			ph := phases[name]
			ph[0] = append(ph[0], reqs[0].At.Sub(r.start))
			ph[1] = append(ph[1], r.end.Sub(reqs[len(reqs)-1].At))
			phases[name] = ph
		}
		if o.nexus {
			first, _ := api.Answered("shell")
			if !strings.Contains(first.Responses.DeveloperText(), "nexus is active") {
				t.Fatal("nexus's hooks did not run in the timed session")
			}
		}
		if timed {
			n := 0
			for ev, ds := range e2ekit.HookTimes(t, log) {
				perEvent[ev] = append(perEvent[ev], ds...)
				n += len(ds)
			}
			processes = append(processes, n)
		}
		return r.wall
	}
	for range runs {
		bare = append(bare, play("without nexus", sessionOpts{}, false, false))
		with = append(with, play("with nexus", sessionOpts{nexus: true}, false, false))
		if split {
			hooksOnly = append(hooksOnly, play("nexus hooks, no MCP", sessionOpts{nexus: true}, true, false))
			oneServer = append(oneServer, play("nexus, no nauro server", sessionOpts{nexus: true, installEnv: []string{"NEXUS_DECISIONS_ENABLED=false"}}, false, false))
		}
		play("", sessionOpts{nexus: true}, false, true)
	}
	all := func(ds []time.Duration) string {
		var s []string
		for _, d := range ds {
			s = append(s, strconv.Itoa(int(d/time.Millisecond)))
		}
		return strings.Join(s, " ")
	}
	added := e2ekit.Median(with) - e2ekit.Median(bare)
	lines := []string{
		fmt.Sprintf("codex exec scripted session (prompt, exec_command, answer), median of %d, %s:", runs, time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  without nexus              %s (runs: %s ms)", e2ekit.Ms(e2ekit.Median(bare)), all(bare)),
		fmt.Sprintf("  with nexus                 %s (runs: %s ms), added %s", e2ekit.Ms(e2ekit.Median(with)), all(with), e2ekit.Ms(added)),
	}
	if split {
		lines = append(lines, fmt.Sprintf("  nexus hooks, no MCP        %s (runs: %s ms), added %s", e2ekit.Ms(e2ekit.Median(hooksOnly)), all(hooksOnly), e2ekit.Ms(e2ekit.Median(hooksOnly)-e2ekit.Median(bare))))
		lines = append(lines, fmt.Sprintf("  nexus, no nauro server     %s (runs: %s ms), added %s", e2ekit.Ms(e2ekit.Median(oneServer)), all(oneServer), e2ekit.Ms(e2ekit.Median(oneServer)-e2ekit.Median(bare))))
	}
	for _, name := range []string{"without nexus", "with nexus", "nexus hooks, no MCP", "nexus, no nauro server"} {
		if ph, ok := phases[name]; ok {
			lines = append(lines, fmt.Sprintf("  %-26s start to 1st request %s, last request to exit %s", name+":", e2ekit.Ms(e2ekit.Median(ph[0])), e2ekit.Ms(e2ekit.Median(ph[1]))))
		}
	}
	events := make([]string, 0, len(perEvent))
	for ev := range perEvent {
		events = append(events, ev)
	}
	sort.Strings(events)
	var sum time.Duration
	for _, ev := range events {
		ds := perEvent[ev]
		sum += e2ekit.Median(ds) * time.Duration(len(ds)/runs)
		lines = append(lines, fmt.Sprintf("  hook %-22s median %s, max %s (%d processes)", ev, e2ekit.Ms(e2ekit.Median(ds)), e2ekit.Ms(slices.Max(ds)), len(ds)))
	}
	slices.Sort(processes)
	lines = append(lines, fmt.Sprintf("  hooks per timed session    %d processes, %s by the medians", processes[len(processes)/2], e2ekit.Ms(sum)))
	if se := perEvent[codexhost.SessionEnd]; len(se) > 0 && slices.Max(se) > codexhost.MaxShortTimeout*time.Second {
		t.Errorf("a SessionEnd hook took %s: Codex kills it at %d s", slices.Max(se), codexhost.MaxShortTimeout)
	}
	e2ekit.Figures(t, strings.Join(lines, "\n")+"\n")
}
