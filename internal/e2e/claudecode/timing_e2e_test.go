//go:build e2e

package claudecode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// mcpTimerArg makes the test binary a recording proxy in front of one MCP
// server: `<test binary> -nexus-e2e-mcptimer LOG NAME CMD ARGS...` runs
// CMD, passes every line of stdin to it and every line it writes to
// stdout, and appends to LOG when it started and when each message went
// by ("<unix ns> start|in|out NAME <method or id>"). It is how the timing
// test sees what Claude Code waits for from an MCP server: its initialize
// and tools/list answers.
const mcpTimerArg = "-nexus-e2e-mcptimer"

func mcpTimer(log, name string, argv []string) int {
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	var mu sync.Mutex
	note := func(dir string, line []byte) {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		what := ""
		if line != nil {
			_ = json.Unmarshal(line, &m)
			what = m.Method
			if what == "" {
				what = "id=" + string(m.ID)
			} else if len(m.ID) > 0 {
				what += " id=" + string(m.ID)
			}
		}
		mu.Lock()
		fmt.Fprintf(f, "%d %s %s %s\n", time.Now().UnixNano(), dir, name, what)
		mu.Unlock()
	}
	note("start", nil)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				note("in", line)
				in.Write(line)
			}
			if err != nil {
				in.Close()
				return
			}
		}
	}()
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			os.Stdout.Write(line)
			note("out", line)
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

// mcpStandInArg makes the test binary a stand-in for one MCP server:
// `<test binary> -nexus-e2e-mcpstandin FILE` answers initialize and
// tools/list at once with the answers FILE recorded from the real server
// (standInMCP), every other request with an error, and exits at end of
// input or on a signal. Sessions with stand-ins show what Claude Code
// itself spends on nexus's two MCP servers, apart from what the servers
// take to answer.
const mcpStandInArg = "-nexus-e2e-mcpstandin"

func mcpStandIn(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	answers := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
	if len(answers) != 2 {
		fmt.Fprintln(os.Stderr, "stand-in: want two recorded answers in", file)
		return 1
	}
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var m struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(line, &m)
			if len(m.ID) > 0 {
				var ans map[string]any
				switch m.Method {
				case "initialize":
					_ = json.Unmarshal([]byte(answers[0]), &ans)
				case "tools/list":
					_ = json.Unmarshal([]byte(answers[1]), &ans)
				default:
					ans = map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32601, "message": "the stand-in answers initialize and tools/list only"}}
				}
				ans["id"] = m.ID
				out, _ := json.Marshal(ans)
				os.Stdout.Write(append(out, '\n'))
			}
		}
		if err != nil {
			return 0
		}
	}
}

// removeHooks takes the hooks nexus install wrote out of the project's
// Claude Code settings, leaving its agents, skills and MCP servers.
func removeHooks(s *session) {
	path := filepath.Join(s.Proj, ".claude", "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.T.Fatal(err)
	}
	var settings map[string]json.RawMessage
	if err := json.Unmarshal(b, &settings); err != nil {
		s.T.Fatal(err)
	}
	if _, ok := settings["hooks"]; !ok {
		s.T.Fatalf("no hooks in %s: %s", path, b)
	}
	delete(settings, "hooks")
	if b, err = json.Marshal(settings); err != nil {
		s.T.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.T.Fatal(err)
	}
}

// standInMCP records each of the project's MCP servers' answers to
// initialize and tools/list (running it once, untimed) and replaces the
// server in .mcp.json with an mcpStandIn replaying them.
func standInMCP(s *session) {
	s.T.Helper()
	self, err := os.Executable()
	if err != nil {
		s.T.Fatal(err)
	}
	path := filepath.Join(s.Proj, ".mcp.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.T.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		s.T.Fatal(err)
	}
	servers, _ := cfg["mcpServers"].(map[string]any)
	for name, v := range servers {
		sv, _ := v.(map[string]any)
		cmdName, _ := sv["command"].(string)
		var args []string
		for _, a := range sv["args"].([]any) {
			args = append(args, a.(string))
		}
		cmd := exec.Command(cmdName, args...)
		cmd.Dir, cmd.Env = s.Proj, s.Env
		if env, ok := sv["env"].(map[string]any); ok {
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+fmt.Sprint(v))
			}
		}
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.197"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
		out, err := cmd.Output()
		if err != nil || strings.Count(string(out), "\n") != 2 {
			s.T.Fatalf("record MCP server %s: %v\n%s", name, err, out)
		}
		file := filepath.Join(s.T.TempDir(), name+".jsonl")
		if err := os.WriteFile(file, out, 0o644); err != nil {
			s.T.Fatal(err)
		}
		servers[name] = map[string]any{"command": self, "args": []any{mcpStandInArg, file}}
	}
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		s.T.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.T.Fatal(err)
	}
}

// timeHooks rewrites the project's Claude Code settings so every nexus hook
// runs under hookTimer, and its .mcp.json so every MCP server runs behind
// mcpTimer, both logging to the returned files.
func timeHooks(s *session) (hookLog, mcpLog string) {
	s.T.Helper()
	self, err := os.Executable()
	if err != nil {
		s.T.Fatal(err)
	}
	hookLog = filepath.Join(s.T.TempDir(), "hook-times")
	path := filepath.Join(s.Proj, ".claude", "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.T.Fatal(err)
	}
	nexus := filepath.Join(binDir, "nexus")
	out := strings.ReplaceAll(string(b), `"command": "`+nexus+` hook`, `"command": "`+self+` `+e2ekit.HookTimerArg+` `+hookLog+` `+nexus+` hook`)
	if out == string(b) {
		s.T.Fatalf("no nexus hook command to wrap in %s", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		s.T.Fatal(err)
	}
	mcpLog = filepath.Join(s.T.TempDir(), "mcp-times")
	path = filepath.Join(s.Proj, ".mcp.json")
	b, err = os.ReadFile(path)
	if err != nil {
		return hookLog, "" // no MCP server
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		s.T.Fatal(err)
	}
	servers, _ := cfg["mcpServers"].(map[string]any)
	for name, v := range servers {
		sv, _ := v.(map[string]any)
		cmd, _ := sv["command"].(string)
		args, _ := sv["args"].([]any)
		sv["command"] = self
		sv["args"] = append([]any{mcpTimerArg, mcpLog, name, cmd}, args...)
	}
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		s.T.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.T.Fatal(err)
	}
	return hookLog, mcpLog
}

// span is one hook process or MCP exchange on the session's clock.
type span struct {
	what       string
	start, end time.Duration // since claude started
}

// hookSpans reads a hookTimer log: each hook process's span.
func hookSpans(t *testing.T, log string, start time.Time) []span {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("no hook ran under the timer: %v", err)
	}
	var out []span
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("hook timer line %q", l)
		}
		wall, err1 := strconv.ParseInt(f[0], 10, 64)
		at, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("hook timer line %q", l)
		}
		st := time.Unix(0, at).Sub(start)
		out = append(out, span{what: f[2], start: st, end: st + time.Duration(wall)})
	}
	return out
}

// mcpServer is what an MCP server's proxy saw: when the server was
// started, and when its initialize and tools/list were asked and answered.
type mcpServer struct {
	start, initAsked, initAnswered, listAsked, listAnswered time.Duration
}

// mcpSpans reads an mcpTimer log, per server.
func mcpSpans(t *testing.T, log string, start time.Time) map[string]*mcpServer {
	t.Helper()
	out := map[string]*mcpServer{}
	b, err := os.ReadFile(log)
	if err != nil {
		return out
	}
	ids := map[string]string{} // server+id → method asked
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, ns).Sub(start)
		name := f[2]
		s := out[name]
		if s == nil {
			s = &mcpServer{}
			out[name] = s
		}
		rest := f[3:]
		switch f[1] {
		case "start":
			s.start = at
		case "in":
			if len(rest) == 2 {
				ids[name+rest[1]] = rest[0]
			}
			switch {
			case len(rest) > 0 && rest[0] == "initialize" && s.initAsked == 0:
				s.initAsked = at
			case len(rest) > 0 && rest[0] == "tools/list" && s.listAsked == 0:
				s.listAsked = at
			}
		case "out":
			if len(rest) == 1 {
				switch ids[name+rest[0]] {
				case "initialize":
					if s.initAnswered == 0 {
						s.initAnswered = at
					}
				case "tools/list":
					if s.listAnswered == 0 {
						s.listAnswered = at
					}
				}
			}
		}
	}
	return out
}

// trace logs one recorded session's timeline: the hooks, every MCP
// message and the fake API's requests, in milliseconds since claude
// started (NEXUS_E2E_TIMING_TRACE=1).
func trace(t *testing.T, r e2ekit.ClaudeResult, api *fa.Server, hs []span, mcpLog string) {
	type ev struct {
		at   time.Duration
		what string
	}
	var evs []ev
	for _, h := range hs {
		evs = append(evs, ev{h.start, "hook " + h.what + " start"}, ev{h.end, "hook " + h.what + " end"})
	}
	if b, err := os.ReadFile(mcpLog); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			ns, rest, _ := strings.Cut(l, " ")
			if v, err := strconv.ParseInt(ns, 10, 64); err == nil {
				evs = append(evs, ev{time.Unix(0, v).Sub(r.Start), "mcp " + rest})
			}
		}
	}
	for _, q := range api.Requests() {
		evs = append(evs, ev{q.At.Sub(r.Start), fmt.Sprintf("api %s %s turn=%q", q.Method, q.Path, q.Turn)})
	}
	slices.SortFunc(evs, func(a, b ev) int { return int(a.at - b.at) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%7.1f ms  %s\n", float64(e.at)/float64(time.Millisecond), e.what)
	}
	t.Logf("timeline (wall %s):\n%s", r.Wall, b.String())
}

// firstTurn is when the first scripted model request reached the fake
// API, since claude started: everything before it is the session's start.
func firstTurn(t *testing.T, api *fa.Server, start time.Time) time.Duration {
	t.Helper()
	for _, r := range api.Messages() {
		if r.Turn != "" {
			return r.At.Sub(start)
		}
	}
	t.Fatal("no scripted turn was asked for")
	return 0
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

// timingOpts set a timing session up: the kit's options, and what only
// the timing varies (the session's hooks taken out, its MCP servers
// replaced by stand-ins).
type timingOpts struct {
	sessionOpts
	noHooks    bool
	standInMCP bool
}

// TestE2ETiming measures what nexus adds to a scripted `claude -p` session:
// the same script without nexus, with nexus, with nexus behind recording
// wrappers (every hook process timed, every MCP server's messages
// timestamped) and (NEXUS_E2E_TIMING_SPLIT=1) with nexus's agents and
// skills only, with its hooks but not its MCP servers, and with its MCP
// servers replaced by stand-ins that answer at once (what Claude Code
// itself spends on two MCP servers), alternating, NEXUS_E2E_TIMING_RUNS
// times each (default 3). Besides the sessions' wall times it reports when the first model
// request reached the fake API (what a session waits for before the model
// is asked anything) and, in the recorded sessions, when the SessionStart
// and UserPromptSubmit hooks ran and when each MCP server was started and
// answered initialize and tools/list. It prints the medians and appends
// them to $NEXUS_E2E_FIGURES when set (scripts/e2e/run.sh prints that file
// at the end). It runs before the parallel sessions, alone in this package.
func TestE2ETiming(t *testing.T) {
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("NEXUS_E2E_TIMING_RUNS")); err == nil && v > 0 {
		runs = v
	}
	// The variant without nexus's MCP server only splits the added time
	// further; make e2e leaves it out to stay within its time budget.
	split := os.Getenv("NEXUS_E2E_TIMING_SPLIT") == "1"
	var without, with, filesOnly, hooksOnly, standIn, hooks []time.Duration
	var firstWithout, firstWith, firstFilesOnly, firstHooksOnly, firstStandIn, firstTimed []time.Duration
	hookSpansBy := map[string][][2]time.Duration{} // event → [start, end] per run
	type mcpTimes struct{ start, initAsked, init, listAsked, list []time.Duration }
	servers := map[string]*mcpTimes{}
	hookCount := 0
	play := func(o timingOpts, timed bool) (wall, first time.Duration, hs []span, ms map[string]*mcpServer) {
		api := timingScript()
		defer api.Close()
		s := newSession(t, api, o.sessionOpts)
		if err := os.WriteFile(filepath.Join(s.Proj, "README.md"), []byte("# timing\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if o.NoMCP {
			// nexus install claude wrote .mcp.json with nexus's servers only.
			if err := os.Remove(filepath.Join(s.Proj, ".mcp.json")); err != nil {
				t.Fatal(err)
			}
		}
		if o.noHooks {
			removeHooks(s)
		}
		if o.standInMCP {
			standInMCP(s)
		}
		var hookLog, mcpLog string
		if timed {
			hookLog, mcpLog = timeHooks(s)
		}
		r := s.Run("e2e: timing")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("scripted turns never reached: %v", u)
		}
		first = firstTurn(t, api, r.Start)
		if timed {
			hs, ms = hookSpans(t, hookLog, r.Start), mcpSpans(t, mcpLog, r.Start)
			if os.Getenv("NEXUS_E2E_TIMING_TRACE") == "1" {
				trace(t, r, api, hs, mcpLog)
			}
		}
		return r.Wall, first, hs, ms
	}
	for range runs {
		w, f, _, _ := play(timingOpts{sessionOpts: sessionOpts{NoNexus: true}}, false)
		without, firstWithout = append(without, w), append(firstWithout, f)
		w, f, _, _ = play(timingOpts{}, false)
		with, firstWith = append(with, w), append(firstWith, f)
		if split {
			w, f, _, _ = play(timingOpts{sessionOpts: sessionOpts{NoMCP: true}, noHooks: true}, false)
			filesOnly, firstFilesOnly = append(filesOnly, w), append(firstFilesOnly, f)
			w, f, _, _ = play(timingOpts{sessionOpts: sessionOpts{NoMCP: true}}, false)
			hooksOnly, firstHooksOnly = append(hooksOnly, w), append(firstHooksOnly, f)
			w, f, _, _ = play(timingOpts{standInMCP: true}, false)
			standIn, firstStandIn = append(standIn, w), append(firstStandIn, f)
		}
		_, f, hs, ms := play(timingOpts{}, true)
		firstTimed = append(firstTimed, f)
		var sum time.Duration
		for _, h := range hs {
			sum += h.end - h.start
			if _, seen := hookSpansBy[h.what]; !seen || len(hookSpansBy[h.what]) < len(firstTimed) {
				hookSpansBy[h.what] = append(hookSpansBy[h.what], [2]time.Duration{h.start, h.end})
			}
		}
		hooks, hookCount = append(hooks, sum), len(hs)
		for name, m := range ms {
			mt := servers[name]
			if mt == nil {
				mt = &mcpTimes{}
				servers[name] = mt
			}
			mt.start, mt.initAsked, mt.init = append(mt.start, m.start), append(mt.initAsked, m.initAsked), append(mt.init, m.initAnswered)
			mt.listAsked, mt.list = append(mt.listAsked, m.listAsked), append(mt.list, m.listAnswered)
		}
	}
	added := e2ekit.Median(with) - e2ekit.Median(without)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	lines := []string{
		fmt.Sprintf("claude -p scripted session (prompt, Read, Bash, answer), median of %d, %s:", runs, time.Now().UTC().Format("2006-01-02")),
		fmt.Sprintf("  without nexus           %s (first model request at %s)", ms(e2ekit.Median(without)), ms(e2ekit.Median(firstWithout))),
		fmt.Sprintf("  with nexus              %s (added %s; first model request at %s, %+.0f ms)", ms(e2ekit.Median(with)), ms(added), ms(e2ekit.Median(firstWith)),
			float64(e2ekit.Median(firstWith)-e2ekit.Median(firstWithout))/float64(time.Millisecond)),
		fmt.Sprintf("  nexus hooks, summed     %s over %d hook processes", ms(e2ekit.Median(hooks)), hookCount),
	}
	if split {
		lines = slices.Insert(lines, 3,
			fmt.Sprintf("  agents, skills only     %s (added %s; first model request at %s)", ms(e2ekit.Median(filesOnly)),
				ms(e2ekit.Median(filesOnly)-e2ekit.Median(without)), ms(e2ekit.Median(firstFilesOnly))),
			fmt.Sprintf("  nexus hooks, no MCP     %s (added %s; first model request at %s)", ms(e2ekit.Median(hooksOnly)),
				ms(e2ekit.Median(hooksOnly)-e2ekit.Median(without)), ms(e2ekit.Median(firstHooksOnly))),
			fmt.Sprintf("  stand-in MCP servers    %s (added %s; first model request at %s)", ms(e2ekit.Median(standIn)),
				ms(e2ekit.Median(standIn)-e2ekit.Median(without)), ms(e2ekit.Median(firstStandIn))))
	}
	// Medians of different runs: the ratio is a guide, not an identity.
	if added > 0 {
		lines = append(lines, fmt.Sprintf("  hooks summed / added    %.0f%%", 100*float64(e2ekit.Median(hooks))/float64(added)))
	}
	if split {
		lines = append(lines, "  split of the added time (differences of medians):",
			fmt.Sprintf("    agents, skills             %s (no hooks, no MCP vs without nexus)", ms(e2ekit.Median(filesOnly)-e2ekit.Median(without))),
			fmt.Sprintf("    hooks                      %s (no MCP vs no hooks, no MCP)", ms(e2ekit.Median(hooksOnly)-e2ekit.Median(filesOnly))),
			fmt.Sprintf("    Claude Code's MCP clients  %s (stand-in servers answering at once vs no MCP)", ms(e2ekit.Median(standIn)-e2ekit.Median(hooksOnly))),
			fmt.Sprintf("    nexus's MCP servers        %s (nexus vs stand-in servers)", ms(e2ekit.Median(with)-e2ekit.Median(standIn))))
	}
	lines = append(lines, fmt.Sprintf("  recorded sessions (hooks and MCP servers behind wrappers): first model request at %s", ms(e2ekit.Median(firstTimed))))
	for _, ev := range []string{"SessionStart", "UserPromptSubmit"} {
		var st, en []time.Duration
		for _, se := range hookSpansBy[ev] {
			st, en = append(st, se[0]), append(en, se[1])
		}
		if len(st) > 0 {
			lines = append(lines, fmt.Sprintf("    hook %-18s %s to %s", ev, ms(e2ekit.Median(st)), ms(e2ekit.Median(en))))
		}
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		m := servers[n]
		lines = append(lines, fmt.Sprintf("    MCP %-19s started %s, initialize asked %s answered %s, tools/list asked %s answered %s", n,
			ms(e2ekit.Median(m.start)), ms(e2ekit.Median(m.initAsked)), ms(e2ekit.Median(m.init)), ms(e2ekit.Median(m.listAsked)), ms(e2ekit.Median(m.list))))
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
