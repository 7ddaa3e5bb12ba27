package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHookLatency measures the wall time of one `nexus hook --host claude`
// process per event, as Claude Code pays it (fork, exec, read stdin, work,
// reply, exit), and fails when a median exceeds its budget. It runs only
// with NEXUS_BENCH_HOOKS=1: scripts/bench-hooks.sh sets it. Runs per event:
// NEXUS_BENCH_RUNS (default 300), after 20 warm-up rounds, events taking
// turns.
func TestHookLatency(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_HOOKS") == "" {
		t.Skip("set NEXUS_BENCH_HOOKS=1 (scripts/bench-hooks.sh) to measure hook latency")
	}
	runs := 300
	if n, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	env := benchHookEnv(t, home)
	mustRun := func(p map[string]any) {
		if r := runHook(t, bin, proj, env, payload(t, p)); r.code != 0 || r.stderr != "" {
			t.Fatalf("setup %v: %+v", p["hook_event_name"], r)
		}
	}
	// A project mid-session: plan and tasks open, knowledge files, two
	// agents running, a tool log with history.
	mustRun(map[string]any{"hook_event_name": "SessionStart", "cwd": proj})
	write := func(rel, content string) {
		p := filepath.Join(proj, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".nexus/state/plan.json", `{"schema_version":"0.5","id":1,"topic":"cache","issues":[{"id":1,"title":"eviction","status":"decided","decision":"LRU"},{"id":2,"title":"size","status":"pending"}],"research_summary":"r","created_at":"2026-04-16T08:00:00.000Z"}`)
	var tasks []string
	for i := 1; i <= 8; i++ {
		tasks = append(tasks, fmt.Sprintf(`{"id":%d,"title":"task %d","context":"c","status":"pending","deps":[],"owner":"engineer","created_at":"2026-04-16T08:00:00.000Z"}`, i, i))
	}
	write(".nexus/state/tasks.json", `{"goal":"cache","decisions":["LRU"],"tasks":[`+strings.Join(tasks, ",")+`]}`)
	for i := 0; i < 20; i++ {
		write(fmt.Sprintf(".nexus/memory/pattern-topic-%02d.md", i), "# topic\n")
	}
	write(".nexus/context/architecture.md", "# a\n")
	mustRun(map[string]any{"hook_event_name": "SubagentStart", "cwd": proj, "agent_id": "eng1", "agent_type": "nexus:engineer"})
	mustRun(map[string]any{"hook_event_name": "SubagentStart", "cwd": proj, "agent_id": "arc1", "agent_type": "nexus:architect"})

	cases := []struct {
		name   string
		budget time.Duration
		p      map[string]any
		check  func(hookResult) bool
	}{
		{"PostToolUse (engineer Edit)", 5 * time.Millisecond,
			map[string]any{"hook_event_name": "PostToolUse", "agent_id": "eng1", "agent_type": "nexus:engineer", "tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(proj, "src/cache.go"), "old_string": "a", "new_string": "b"}, "tool_response": map[string]any{"filePath": filepath.Join(proj, "src/cache.go")}},
			func(r hookResult) bool { return r.stdout == "" }},
		{"PreToolUse (engineer Bash, allowed)", 5 * time.Millisecond,
			map[string]any{"hook_event_name": "PreToolUse", "agent_id": "eng1", "agent_type": "nexus:engineer", "tool_name": "Bash", "tool_input": map[string]any{"command": "go test ./... 2>&1 | tail -20"}},
			func(r hookResult) bool { return r.stdout == "" }},
		{"PreToolUse (architect Edit, denied)", 5 * time.Millisecond,
			map[string]any{"hook_event_name": "PreToolUse", "agent_id": "arc1", "agent_type": "nexus:architect", "tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(proj, "docs/x.md")}},
			func(r hookResult) bool { return strings.Contains(r.stdout, `"deny"`) }},
		{"UserPromptSubmit ([plan], nx-plan body injected)", 10 * time.Millisecond,
			map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "[plan] add a response cache to the API client"},
			func(r hookResult) bool { return strings.Contains(r.stdout, "nexus activated the nx-plan skill") }},
		// A prompt of 20,000 inline-action tags (80 KB; issue 22: 54 s when
		// it was quadratic): linear detection, MaxInlineActions run, the
		// rest reported.
		{"UserPromptSubmit ([d] × 20,000)", 50 * time.Millisecond,
			map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": strings.Repeat("[d] ", 20000)},
			func(r hookResult) bool { return strings.Contains(r.stdout, "and not the other 19980") }},
	}
	var probes []*hookProbe
	for _, c := range cases {
		c.p["cwd"] = proj
		b, _ := json.Marshal(c.p)
		probes = append(probes, &hookProbe{name: c.name, args: []string{"hook", "--host", "claude"}, stdin: b, check: c.check, budget: c.budget})
	}
	// Claude Code's status line runs after every assistant message: a
	// hook-class process with the same budget.
	sl, _ := json.Marshal(map[string]any{"cwd": proj, "workspace": map[string]any{"current_dir": proj, "project_dir": proj}, "model": map[string]any{"display_name": "Opus"}})
	probes = append(probes, &hookProbe{name: "nexus statusline", args: []string{"statusline"}, stdin: sl, budget: 5 * time.Millisecond,
		check: func(r hookResult) bool {
			return strings.Contains(r.stdout, "plan 1/2 decided · tasks 0/8 done · 2 agents running")
		}})
	probes = append(probes, &hookProbe{name: "(reference) nexus version", args: []string{"version"}})
	// The floor of a Go process on this machine, in the same run: the
	// hook and version figures are also given as ratios to it (issue 27:
	// PostToolUse ≤ 2×, version ≤ 1.7×).
	probes = append(probes, &hookProbe{name: helloProbe, bin: built(t, "hello"),
		check: func(r hookResult) bool { return r.stdout == "hello\n" }})
	rows := measureHookProbes(t, bin, proj, env, runs, probes)
	for _, n := range []string{"PostToolUse (engineer Edit)", "(reference) nexus version"} {
		printRatio(t, rows, n, helloProbe, runs)
	}
}

// helloProbe is the static Go hello every hook figure is paired with.
const helloProbe = "(reference) static Go hello"

// printRatio prints the ratio of two probes' medians (and of their
// minimums) as a line of the Go benchmark format,
// BenchmarkHookLatency/<name>_/_<base>  <runs>  <x> x-median  <x> x-min,
// which scripts/benchtable reads, and logs it.
func printRatio(t *testing.T, rows []probeRow, name, base string, runs int) {
	var a, b *probeRow
	for i := range rows {
		switch rows[i].name {
		case name:
			a = &rows[i]
		case base:
			b = &rows[i]
		}
	}
	if a == nil || b == nil || b.median == 0 || b.min == 0 {
		t.Fatalf("no %q or %q to pair", name, base)
	}
	med, mn := float64(a.median)/float64(b.median), float64(a.min)/float64(b.min)
	t.Logf("%s / %s: %.2f× (medians %s / %s), %.2f× (minimums)", name, base, med, ms(a.median), ms(b.median), mn)
	fmt.Printf("BenchmarkHookLatency/%s_/_%s\t%d\t%.3f x-median\t%.3f x-min\n",
		strings.Join(strings.Fields(name), "_"), strings.Join(strings.Fields(base), "_"), runs, med, mn)
}

// TestHookLatencyLargeState measures the hooks that read the task list
// and the tool log on a project with 1,000 tasks (issue 17): a prompt, an
// agent's start and its stop, and an agent's stop computing files_touched
// from a 100,000-line tool log. Like TestHookLatency it runs only with
// NEXUS_BENCH_HOOKS=1 (scripts/bench-hooks.sh).
func TestHookLatencyLargeState(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_HOOKS") == "" {
		t.Skip("set NEXUS_BENCH_HOOKS=1 (scripts/bench-hooks.sh) to measure hook latency")
	}
	runs := 300
	if n, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	bin := nexusAlone(t)
	env := benchHookEnv(t, t.TempDir())
	var probes []*hookProbe
	for _, logLines := range []int{100, 100000} {
		proj := t.TempDir()
		if r := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "SessionStart", "cwd": proj})); r.code != 0 || r.stderr != "" {
			t.Fatalf("SessionStart: %+v", r)
		}
		var tasks []string
		for i := 1; i <= 1000; i++ {
			owner := []string{"engineer", "tester", "writer", "researcher"}[i%4]
			tasks = append(tasks, fmt.Sprintf(`{"id":%d,"title":"Implement part %d of the storage layer","context":"The storage layer needs its reader, its writer and tests.","approach":"Reader first.","acceptance":"go test passes","status":"%s","deps":[],"owner":"%s","created_at":"2026-04-16T08:00:00.000Z"}`,
				i, i, []string{"completed", "pending", "in_progress"}[i%3], owner))
		}
		writeProjFile(t, proj, ".nexus/state/tasks.json", `{"goal":"storage","decisions":["atomic renames"],"tasks":[`+strings.Join(tasks, ",")+`]}`)
		for _, id := range []string{"eng1", "eng2"} {
			if r := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "SubagentStart", "cwd": proj, "agent_id": id, "agent_type": "nexus:engineer"})); r.code != 0 || r.stderr != "" {
				t.Fatalf("SubagentStart: %+v", r)
			}
		}
		// The tool log: most lines from other agents and Lead, one write
		// of eng1's in a hundred.
		var log strings.Builder
		for i := range logLines {
			agent := []string{"eng2", "", "arc1", "tst1"}[i%4]
			if i%100 == 7 {
				agent = "eng1"
			}
			fmt.Fprintf(&log, `{"ts":"2026-04-16T08:%02d:%02d.000Z","agent_id":"%s","agent":"engineer","tool":"Edit","file":"src/file%d.go","status":"ok","writes":true}`+"\n", i/60%60, i%60, agent, i%500)
		}
		writeProjFile(t, proj, ".nexus/state/nexus/tool-log.jsonl", log.String())
		hook := func(name string, budget time.Duration, p map[string]any, check func(hookResult) bool) *hookProbe {
			p["cwd"] = proj
			b, _ := json.Marshal(p)
			return &hookProbe{name: name, args: []string{"hook", "--host", "claude"}, dir: proj, stdin: b, budget: budget, check: check}
		}
		if logLines == 100 {
			probes = append(probes,
				hook("UserPromptSubmit, 1,000 tasks", 10*time.Millisecond,
					map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "[run] carry on with the storage layer"}, nil),
				hook("SubagentStart, 1,000 tasks", 10*time.Millisecond,
					map[string]any{"hook_event_name": "SubagentStart", "agent_id": "eng2", "agent_type": "nexus:engineer"},
					func(r hookResult) bool { return strings.Contains(r.stdout, "TASK: ") }),
				hook("SubagentStop, 1,000 tasks", 10*time.Millisecond,
					map[string]any{"hook_event_name": "SubagentStop", "agent_id": "eng1", "agent_type": "nexus:engineer", "last_assistant_message": "done"}, nil))
			continue
		}
		probes = append(probes, hook("SubagentStop, 100,000-line tool log", 20*time.Millisecond,
			map[string]any{"hook_event_name": "SubagentStop", "agent_id": "eng1", "agent_type": "nexus:engineer", "last_assistant_message": "done"}, nil))
	}
	measureHookProbes(t, bin, "", env, runs, probes)
}

func writeProjFile(t *testing.T, proj, rel, content string) {
	t.Helper()
	p := filepath.Join(proj, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchHookEnv is hookEnv with NEXUS_BENCH_CORE picking the distribution:
// a directory, or "" for the one built into nexus (scripts/bench-hooks.sh
// passes CORE).
func benchHookEnv(t *testing.T, home string) []string {
	env := hookEnv(t, home)
	if core, ok := os.LookupEnv("NEXUS_BENCH_CORE"); ok {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "NEXUS_CORE_DIR=") })
		if core != "" {
			env = append(env, "NEXUS_CORE_DIR="+core)
		}
		t.Logf("distribution: %q (empty: built in)", core)
	}
	return env
}

// hookProbe is one process measured by measureHookProbes.
type hookProbe struct {
	name   string
	bin    string // the program ("" = measureHookProbes's bin)
	args   []string
	dir    string // the working directory when measureHookProbes gets none
	stdin  []byte
	file   string
	check  func(hookResult) bool
	budget time.Duration
	walls  []time.Duration
	cpus   []time.Duration
}

// measureHookProbes runs the probes round-robin (so load changes during
// the run affect every event alike), 20 checked warm-up rounds then runs
// measured ones, prints the table and fails a median over its budget.
// probeRow is one probe's measured distribution.
type probeRow struct {
	name             string
	median, p90, min time.Duration
	cpu              time.Duration // median user+system CPU time of the process
	budget           time.Duration
}

func measureHookProbes(t *testing.T, bin, proj string, env []string, runs int, probes []*hookProbe) []probeRow {
	type row = probeRow
	// Stdin comes from a file and stdout goes to /dev/null in the measured
	// runs, so the harness's own pipe copying is not timed; the warm-up
	// rounds check every reply.
	for _, pr := range probes {
		f := filepath.Join(t.TempDir(), "payload.json")
		if err := os.WriteFile(f, pr.stdin, 0o644); err != nil {
			t.Fatal(err)
		}
		pr.file = f
	}
	for i := 0; i < runs+20; i++ {
		for _, pr := range probes {
			prog := bin
			if pr.bin != "" {
				prog = pr.bin
			}
			cmd := exec.Command(prog, pr.args...)
			cmd.Dir, cmd.Env = proj, env
			if proj == "" {
				cmd.Dir = pr.dir
			}
			if i < 20 {
				cmd.Stdin = bytes.NewReader(pr.stdin)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				if err != nil || errb.Len() > 0 || (pr.check != nil && !pr.check(hookResult{stdout: out.String()})) {
					t.Fatalf("%s: %v %q %q", pr.name, err, errb.String(), out.String())
				}
				continue
			}
			in, err := os.Open(pr.file)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = in
			start := time.Now()
			err = cmd.Run()
			d := time.Since(start)
			in.Close()
			if err != nil {
				t.Fatalf("%s: %v", pr.name, err)
			}
			pr.walls = append(pr.walls, d)
			pr.cpus = append(pr.cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	var rows []row
	for _, pr := range probes {
		sort.Slice(pr.walls, func(i, j int) bool { return pr.walls[i] < pr.walls[j] })
		sort.Slice(pr.cpus, func(i, j int) bool { return pr.cpus[i] < pr.cpus[j] })
		rows = append(rows, row{pr.name, pr.walls[len(pr.walls)/2], pr.walls[len(pr.walls)*9/10], pr.walls[0], pr.cpus[len(pr.cpus)/2], pr.budget})
	}
	load, _ := os.ReadFile("/proc/loadavg")
	var b strings.Builder
	fmt.Fprintf(&b, "nexus hook wall time per process, %d runs each (load average: %s)\n", runs, strings.TrimSpace(string(load)))
	fmt.Fprintf(&b, "%-50s %9s %9s %9s %9s %7s\n", "event", "median", "p90", "min", "cpu", "budget")
	for _, r := range rows {
		budget := "-"
		if r.budget > 0 {
			budget = r.budget.String()
		}
		fmt.Fprintf(&b, "%-50s %9s %9s %9s %9s %7s\n", r.name, ms(r.median), ms(r.p90), ms(r.min), ms(r.cpu), budget)
	}
	b.WriteString("median, p90, min: wall time per process; cpu: median user+system CPU time per process\n")
	t.Log("\n" + b.String())
	for _, r := range rows {
		printBenchResult("BenchmarkHookLatency", r.name, runs, "ms-median", r.median, "ms-p90", r.p90, "ms-min", r.min, "ms-cpu", r.cpu)
	}
	for _, r := range rows {
		if r.budget > 0 && r.median > r.budget {
			t.Errorf("%s: median %s over the %s budget", r.name, ms(r.median), r.budget)
		}
	}
	return rows
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// printBenchResult prints one measured case as a line of the Go benchmark
// format (what `go test -bench` prints and benchstat reads), so that
// scripts/benchtable reads these latency tests like any benchmark instead
// of parsing the table logged for people. The case's words are joined by
// underscores, as sub-benchmark names are. Metrics come as unit, duration
// pairs and are printed in milliseconds.
func printBenchResult(bench, name string, n int, metrics ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s\t%d", bench, strings.Join(strings.Fields(name), "_"), n)
	for i := 0; i+1 < len(metrics); i += 2 {
		fmt.Fprintf(&b, "\t%.3f %s", float64(metrics[i+1].(time.Duration).Microseconds())/1000, metrics[i])
	}
	fmt.Println(b.String())
}
