// Command benchtable measures the performance figures the nexus issues set
// and prints them as one table: each figure's median, its target, PASS or
// MISS, and the command behind it. `make bench` runs it; docs/performance.md
// explains every row.
//
//	go run ./scripts/benchtable [-runs N] [-conf-runs N] [-only REGEXP] [-core DIR] [-strict]
//
// Process-level figures (a whole `nexus ...` process, as a host pays it)
// are timed by internal/proctime; the others come from the Go benchmarks
// beside the code they measure and from scripts/bench-hooks.sh, whose
// output is parsed. A figure with no benchmark yet prints "n/a (not
// measured yet)"; nothing is ever estimated.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/proctime"
)

// row is one figure of the table.
type row struct {
	figure  string
	target  float64
	unit    string // "ms" or "obs/s"
	atLeast bool   // the target is a floor (throughput), not a ceiling
	command string
	// outcome
	value  float64
	na     string // why there is no value ("" = measured)
	err    error
	detail string
}

// env is what every measurement shares.
type env struct {
	root, core, work, bin string
	runs, confRuns        int
	peer                  string   // the peer's mcp-server.cjs ("" = none)
	nexusEnv              []string // a clean environment for nexus processes
}

// measurer produces one or more rows.
type measurer struct {
	name string
	run  func(e *env) []*row
}

var measurers = []measurer{
	{"cli", measureCLI},
	{"hooks", measureHooks},
	{"conformance", measureConformance},
	{"mcp", measureMCP},
	{"decisions", measureDecisions},
	{"decision-scale", measureDecisionScale},
	{"observe", measureObserve},
	{"gc", measureGC},
	{"plugins", measurePlugins},
	{"peer", measurePeer},
}

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	e := &env{root: root}
	only := flag.String("only", "", "measure only the groups matching this regexp ("+groupNames()+")")
	flag.StringVar(&e.core, "core", "", "nexus-core distribution directory (default: the one built into nexus)")
	flag.IntVar(&e.runs, "runs", 200, "runs per process-level figure (nexus validate and memory gc use a quarter and a tenth)")
	flag.IntVar(&e.confRuns, "conf-runs", 11, "runs of the in-process conformance suite (the --target nexus mcp run gets half)")
	flag.StringVar(&e.peer, "peer", os.Getenv("NEXUS_PEER_MCP"), "the Node peer's MCP server (claude-nexus 0.27.0 bridge/mcp-server.cjs) for the side-by-side rows; needs Node.js 20+")
	sizes := flag.String("peer-sizes", "100,1000,10000", "task/cycle counts of the side-by-side rows")
	strict := flag.Bool("strict", false, "exit 1 when a figure misses its target")
	flag.Parse()
	filter, err := regexp.Compile(*only)
	if err != nil {
		fail(fmt.Errorf("-only: %w", err))
	}
	if peerSizes, err = parseSizes(*sizes); err != nil {
		fail(fmt.Errorf("-peer-sizes: %w", err))
	}
	if e.core != "" {
		if e.core, err = filepath.Abs(e.core); err != nil {
			fail(err)
		}
		if _, err := os.Stat(filepath.Join(e.core, "manifest.json")); err != nil {
			fail(fmt.Errorf("no nexus-core distribution at %s (pass -core DIR, or none for the built-in one)", e.core))
		}
	}
	if e.work, err = os.MkdirTemp("", "nexus-bench-"); err != nil {
		fail(err)
	}
	defer os.RemoveAll(e.work)
	home := filepath.Join(e.work, "home")
	e.nexusEnv = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	if e.core != "" {
		e.nexusEnv = append(e.nexusEnv, "NEXUS_CORE_DIR="+e.core)
	}
	// Built as `make build` builds it: static (no dynamic loader per
	// process), stripped, no cgo.
	e.bin = filepath.Join(e.work, "nexus")
	if out, err := e.goCmd("build", "-trimpath", "-ldflags", "-s -w", "-o", e.bin, "./cmd/nexus"); err != nil {
		fail(fmt.Errorf("build nexus: %v\n%s", err, out))
	}

	started := time.Now()
	var rows []*row
	for _, m := range measurers {
		if !filter.MatchString(m.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "measuring %s...\n", m.name)
		rows = append(rows, m.run(e)...)
	}
	printTable(os.Stdout, rows, e, time.Since(started))
	code := 0
	for _, r := range rows {
		switch {
		case r.err != nil:
			code = 1
		case *strict && r.na == "" && !r.pass():
			code = 1
		}
	}
	os.Exit(code)
}

func groupNames() string {
	var n []string
	for _, m := range measurers {
		n = append(n, m.name)
	}
	return strings.Join(n, ", ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchtable:", err)
	os.Exit(2)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run benchtable inside the nexus module")
		}
	}
}

// goCmd runs the go tool in the module root with cgo off (as make build).
func (e *env) goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// goBench runs `go test -run ^$ -bench PATTERN ARGS... PKG` and parses it.
func (e *env) goBench(pkg, pattern string, args ...string) ([]benchLine, string, error) {
	all := append([]string{"test", "-run", "^$", "-bench", pattern}, args...)
	all = append(all, pkg)
	out, err := e.goCmd(all...)
	cmdline := "go " + strings.Join(quoteArgs(all), " ")
	if err != nil {
		return nil, cmdline, fmt.Errorf("%s: %v\n%s", cmdline, err, tail(out, 20))
	}
	lines, err := parseBench(bytes.NewReader(out))
	return lines, cmdline, err
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " ^$|()*") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// coreArgs passes -core on to nexus ("--core DIR"), or nothing for the
// built-in distribution.
func (e *env) coreArgs() []string {
	if e.core == "" {
		return nil
	}
	return []string{"--core", e.core}
}

// timeProcess measures one nexus command with proctime.
func (e *env) timeProcess(r *row, runs int, dir string, check func(stdout, stderr []byte) error, args ...string) {
	res, err := proctime.Measure(context.Background(), []proctime.Spec{{
		Name: r.figure, Path: e.bin, Args: args, Env: e.nexusEnv, Dir: dir, Check: check,
	}}, proctime.Options{Runs: runs, Warmup: min(10, max(2, runs/10)), Deadline: time.Now().Add(3 * time.Minute)})
	if err != nil {
		r.err = err
		return
	}
	p := res[0]
	r.value = ms(p.Median)
	r.detail = fmt.Sprintf("%d runs: median %.2f ms, p90 %.2f ms, min %.2f ms, CPU %.2f ms", p.Runs, ms(p.Median), ms(p.P90), ms(p.Min), ms(p.CPU))
}

func (r *row) pass() bool {
	if r.atLeast {
		return r.value >= r.target
	}
	return r.value <= r.target
}

// --- measurements -------------------------------------------------------

func measureCLI(e *env) []*row {
	dir := filepath.Join(e.work, "empty")
	os.MkdirAll(dir, 0o755)
	version := &row{figure: "`nexus version`", target: 5, unit: "ms", command: fmt.Sprintf("`nexus version` ×%d (proctime)", e.runs)}
	e.timeProcess(version, e.runs, dir, nil, "version")
	n := max(e.runs/4, 5)
	validate := &row{figure: "`nexus validate` (0.10.0)", target: 100, unit: "ms", command: fmt.Sprintf("`nexus validate [--core CORE]` ×%d (proctime)", n)}
	e.timeProcess(validate, n, dir, nil, append([]string{"validate"}, e.coreArgs()...)...)
	return []*row{version, validate}
}

func measureHooks(e *env) []*row {
	rows := []*row{
		{figure: "hook `PostToolUse`", target: 5, unit: "ms"},
		{figure: "hook `PreToolUse` (allowed)", target: 5, unit: "ms"},
		{figure: "hook `PreToolUse` (denied)", target: 5, unit: "ms"},
		{figure: "hook `UserPromptSubmit` with a skill", target: 10, unit: "ms"},
		{figure: "hook `UserPromptSubmit`, `[d] ` × 20,000", target: 50, unit: "ms"},
		{figure: "`nexus statusline`", target: 5, unit: "ms"},
		{figure: "hook `UserPromptSubmit`, 1,000 tasks", target: 10, unit: "ms"},
		{figure: "hook `SubagentStart`, 1,000 tasks", target: 10, unit: "ms"},
		{figure: "hook `SubagentStop`, 1,000 tasks", target: 10, unit: "ms"},
		{figure: "hook `SubagentStop`, 100,000-line tool log", target: 20, unit: "ms"},
	}
	prefixes := []string{"PostToolUse", "PreToolUse (engineer", "PreToolUse (architect", "UserPromptSubmit ([plan]", "UserPromptSubmit ([d]", "nexus statusline",
		"UserPromptSubmit, 1,000 tasks", "SubagentStart, 1,000 tasks", "SubagentStop, 1,000 tasks", "SubagentStop, 100,000-line tool log"}
	cmdline := fmt.Sprintf("RUNS=%d scripts/bench-hooks.sh", e.runs)
	for _, r := range rows {
		r.command = "`" + cmdline + "`"
	}
	cmd := exec.Command("sh", "scripts/bench-hooks.sh")
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), fmt.Sprintf("RUNS=%d", e.runs), "CORE="+e.core)
	out, runErr := cmd.CombinedOutput()
	lines, _ := parseBench(bytes.NewReader(out))
	table := latencyRows(lines, "BenchmarkHookLatency")
	for i, r := range rows {
		for _, h := range table {
			if strings.HasPrefix(h.Event, prefixes[i]) {
				r.value = h.Median
				r.detail = fmt.Sprintf("%s: median %.2f ms, p90 %.2f ms, min %.2f ms, CPU %.2f ms", h.Event, h.Median, h.P90, h.Min, h.CPU)
			}
		}
		if r.detail == "" {
			// The script exits 1 when a median is over budget, with the
			// table printed: only a missing table is an error.
			r.err = fmt.Errorf("%s printed no %q row (%v):\n%s", cmdline, prefixes[i], runErr, tail(out, 15))
		}
	}
	return rows
}

func measureConformance(e *env) []*row {
	dir := filepath.Join(e.work, "conformance")
	os.MkdirAll(dir, 0o755)
	in := &row{figure: "conformance, in-process (46 cases)", target: 1000, unit: "ms", command: fmt.Sprintf("`nexus conformance [--core CORE]` ×%d (proctime)", e.confRuns)}
	e.timeProcess(in, e.confRuns, dir, nil, append([]string{"conformance"}, e.coreArgs()...)...)
	n := max(e.confRuns/2, 3)
	mcp := &row{figure: "conformance, `--target nexus mcp`", target: 3000, unit: "ms", command: fmt.Sprintf("`nexus conformance [--core CORE] --target nexus mcp` ×%d (proctime)", n)}
	e.timeProcess(mcp, n, dir, nil, append(append([]string{"conformance"}, e.coreArgs()...), "--target", e.bin, "mcp")...)
	return []*row{in, mcp}
}

func measureMCP(e *env) []*row {
	read := &row{figure: "MCP `tools/call` over stdio, read (`nx_context`)", target: 1, unit: "ms"}
	write := &row{figure: "MCP `tools/call` over stdio, write (`nx_task_update`)", target: 1, unit: "ms"}
	lines, cmdline, err := e.goBench("./harness/mcpserver/", "^BenchmarkStdioToolCall$/^(context|task_update)$", "-benchtime", "1000x")
	for _, r := range []*row{read, write} {
		r.command, r.err = "`"+cmdline+"`", err
	}
	if err != nil {
		return []*row{read, write}
	}
	for r, sub := range map[*row]string{read: "context", write: "task_update"} {
		v, _, ok := metricMedian(lines, "BenchmarkStdioToolCall/"+sub, "ms-median")
		p99, _, _ := metricMedian(lines, "BenchmarkStdioToolCall/"+sub, "ms-p99")
		if !ok {
			r.err = fmt.Errorf("no ms-median for %s", sub)
			continue
		}
		r.value, r.detail = v, fmt.Sprintf("median of 1000 calls, p99 %.2f ms", p99)
	}
	return []*row{read, write}
}

func measureDecisions(e *env) []*row {
	k1 := &row{figure: "`check_decision`, 1,000 decisions (warm)", target: 5, unit: "ms"}
	k10 := &row{figure: "`check_decision`, 10,000 decisions (warm)", target: 30, unit: "ms"}
	lines, cmdline, err := e.goBench("./plugins/decisions/store/", "^BenchmarkCheckDecisionWarm$", "-benchtime", "300x", "-count", "3")
	for _, r := range []*row{k1, k10} {
		r.command, r.err = "`"+cmdline+"`", err
	}
	if err != nil {
		return []*row{k1, k10}
	}
	for r, n := range map[*row]string{k1: "1000", k10: "10000"} {
		v, runs, ok := metricMedian(lines, "BenchmarkCheckDecisionWarm/decisions="+n, "ns/op")
		if !ok {
			r.err = fmt.Errorf("no result for %s decisions", n)
			continue
		}
		r.value, r.detail = v/1e6, fmt.Sprintf("median of %d runs of 300 calls (mean per call)", runs)
	}
	return []*row{k1, k10}
}

// measureDecisionScale: the decision store at 10,000 decisions (a check
// 2.3 s after the previous one through `nexus mcp --only decisions`, the
// plugin's start to its first answer, `nexus decision check` as a process)
// and, with NEXUS_BENCH_100K=1, at 100,000 (paced call, the store
// process's peak RSS). The synthetic stores are generated per run.
func measureDecisionScale(e *env) []*row {
	paced := &row{figure: "`check_decision` 2.3 s after the previous call, 10,000 decisions", target: 5, unit: "ms"}
	start := &row{figure: "decision store plugin start to first `check_decision`, 10,000 decisions", target: 300, unit: "ms"}
	cli := &row{figure: "`nexus decision check` process, 10,000 decisions", target: 400, unit: "ms"}
	paced100 := &row{figure: "`check_decision` 2.3 s after the previous call, 100,000 decisions", target: 50, unit: "ms"}
	rss100 := &row{figure: "decision store process peak RSS, 100,000 decisions", target: 300, unit: "MiB"}
	rows := []*row{paced, start, cli, paced100, rss100}
	pattern := "^BenchmarkDecisionStoreScale$/^decisions=10000$"
	if os.Getenv("NEXUS_BENCH_100K") == "" {
		for _, r := range []*row{paced100, rss100} {
			r.na = "set NEXUS_BENCH_100K=1 (generating 100,000 decisions takes minutes)"
		}
	} else {
		pattern = "^BenchmarkDecisionStoreScale$"
	}
	lines, cmdline, err := e.goBench("./cmd/nexus/", pattern, "-benchtime", "5x", "-timeout", "60m")
	for _, r := range rows {
		if r.na == "" {
			r.command, r.err = "`"+cmdline+"`", err
		}
	}
	if err != nil {
		return rows
	}
	for _, m := range []struct {
		r            *row
		name, metric string
		detail       string
	}{
		{paced, "decisions=10000/mcp-paced", "ms-median", "median of 5 calls through `nexus mcp --only decisions`, 2.3 s apart"},
		{start, "decisions=10000/plugin-start", "ms-median", "median of 5 starts, persistent index warm"},
		{cli, "decisions=10000/cli-check", "ms-median", "median of 5 processes, persistent index warm"},
		{paced100, "decisions=100000/mcp-paced", "ms-median", "median of 5 calls, 2.3 s apart"},
		{rss100, "decisions=100000/mcp-paced", "MiB-store-peak-rss", "VmHWM of `nexus-plugins serve decisions` after the paced calls"},
	} {
		if m.r.na != "" {
			continue
		}
		v, _, ok := metricMedian(lines, "BenchmarkDecisionStoreScale/"+m.name, m.metric)
		if !ok {
			m.r.err = fmt.Errorf("no %s from %s", m.metric, m.name)
			continue
		}
		m.r.value, m.r.detail = v, m.detail
		// CPU time is what the store itself costs; wall time also holds
		// whatever else the machine runs.
		for _, cpu := range []string{"ms-cpu-median", "ms-store-cpu-median"} {
			if c, _, ok := metricMedian(lines, "BenchmarkDecisionStoreScale/"+m.name, cpu); ok && m.r.unit == "ms" {
				m.r.detail += fmt.Sprintf("; CPU %.1f ms", c)
			}
		}
	}
	return rows
}

func measureObserve(e *env) []*row {
	r := &row{figure: "memory observations, one process, 500-file log", target: 5000, unit: "obs/s", atLeast: true}
	lines, cmdline, err := e.goBench("./memory", "^BenchmarkObserve$", "-benchtime", "5000x", "-count", "5")
	r.command, r.err = "`"+cmdline+"`", err
	if err != nil {
		return []*row{r}
	}
	v, n, ok := metricMedian(lines, "BenchmarkObserve", "obs/s")
	cpu, _, _ := metricMedian(lines, "BenchmarkObserve", "cpu-µs/op")
	if !ok {
		r.err = errors.New("BenchmarkObserve reported no obs/s")
		return []*row{r}
	}
	r.value, r.detail = v, fmt.Sprintf("median of %d runs of 5000; CPU %.0f µs per observation", n, cpu)
	return []*row{r}
}

// measureGC times `nexus memory gc` (the report) over 1,000 and 10,000
// committed memory files, half of them never read (their age comes from
// git log), with 20 completed cycles in history.json.
func measureGC(e *env) []*row {
	n := max(e.runs/10, 5)
	var rows []*row
	for _, files := range []int{1000, 10000} {
		target := 200.0
		if files == 10000 {
			target = 150 // issue 17
		}
		r := &row{figure: fmt.Sprintf("`nexus memory gc` report, %s files", thousands(float64(files))), target: target, unit: "ms",
			command: fmt.Sprintf("`nexus memory gc` ×%d in a git project of %s memory files (proctime)", n, thousands(float64(files)))}
		rows = append(rows, r)
		proj := filepath.Join(e.work, fmt.Sprintf("gc-project-%d", files))
		if err := gcProject(proj, files); err != nil {
			r.err = err
			continue
		}
		last := fmt.Sprintf("pattern-report-file-%05d.md", files-1)
		check := func(stdout, _ []byte) error {
			if !bytes.Contains(stdout, []byte(last)) {
				return fmt.Errorf("the report does not list %s:\n%s", last, tail(stdout, 5))
			}
			return nil
		}
		e.timeProcess(r, n, proj, check, "--project", proj, "memory", "gc")
	}
	return rows
}

func gcProject(proj string, files int) error {
	mem := filepath.Join(proj, ".nexus", "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		return err
	}
	now := time.Now().UTC()
	var access bytes.Buffer
	for i := 0; i < files; i++ {
		p := filepath.Join(mem, fmt.Sprintf("pattern-report-file-%05d.md", i))
		if err := os.WriteFile(p, []byte("# report file\n\nsome content\n"), 0o644); err != nil {
			return err
		}
		if i%2 == 0 {
			fmt.Fprintf(&access, `{"path":%q,"last_accessed_ts":%q,"access_count":%d,"last_agent":"lead"}`+"\n",
				p, now.Add(-time.Duration(i)*time.Hour).Format("2006-01-02T15:04:05.000Z"), i%4)
		}
	}
	ns := filepath.Join(proj, ".nexus", "state", "nexus")
	if err := os.MkdirAll(ns, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ns, "memory-access.jsonl"), access.Bytes(), 0o644); err != nil {
		return err
	}
	var cycles []string
	for i := 0; i < 20; i++ {
		cycles = append(cycles, fmt.Sprintf(`{"schema_version":"0.5","completed_at":%q,"branch":"main","plan":null,"tasks":[]}`,
			now.Add(-time.Duration(i)*48*time.Hour).Format("2006-01-02T15:04:05.000Z")))
	}
	hist := `{"schema_version":"0.5","cycles":[` + strings.Join(cycles, ",") + "]}\n"
	if err := os.WriteFile(filepath.Join(proj, ".nexus", "history.json"), []byte(hist), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "memory"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return nil
}

// measurePlugins runs scripts/bench-plugins.sh: TestPluginLatency times
// whole processes of the built binary (`nexus mcp` to its tools/list answer
// with five plugins; a PreToolUse hook with one subscribed plugin through
// the warm hook server), then the Go benchmarks of the bundled decision
// store: its start to the first answered call, and a tools/call round trip
// through `nexus mcp` to it.
func measurePlugins(e *env) []*row {
	hook := &row{figure: "hook `PreToolUse`, one subscribed plugin", target: 15, unit: "ms"}
	mcp := &row{figure: "`nexus mcp` with 5 plugins: start to `tools/list`", target: 150, unit: "ms"}
	start := &row{figure: "plugin start to first answered call", target: 20, unit: "ms"}
	call := &row{figure: "MCP `tools/call` through a plugin (warm)", target: 1, unit: "ms"}
	hung := &row{figure: "`nexus mcp` beside a hung plugin (1 s start deadline): start to `tools/list`", target: 1150, unit: "ms"}
	cancel := &row{figure: "cancelled plugin call: notification to the plugin's context ending", target: 50, unit: "ms"}
	exit := &row{figure: "`nexus mcp` exit with a plugin without GRPCController", target: 500, unit: "ms"}
	rows := []*row{hook, mcp, start, call, hung, cancel, exit}
	runs := max(e.runs/2, 10)
	cmdline := fmt.Sprintf("RUNS=%d scripts/bench-plugins.sh", runs)
	for _, r := range rows {
		r.command = "`" + cmdline + "`"
	}
	if _, err := os.Stat(filepath.Join(e.root, "scripts", "bench-plugins.sh")); err != nil {
		for _, r := range rows {
			r.na, r.command = "n/a (not measured yet)", "needs scripts/bench-plugins.sh"
		}
		return rows
	}
	cmd := exec.Command("sh", "scripts/bench-plugins.sh")
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), fmt.Sprintf("RUNS=%d", runs), "BENCHTIME=200x")
	out, runErr := cmd.CombinedOutput()
	lines, err := parseBench(bytes.NewReader(out))
	table := latencyRows(lines, "BenchmarkPluginLatency")
	for r, prefix := range map[*row]string{hook: "PreToolUse Bash, 1 subscriber, hook server (deny)", mcp: "nexus mcp: start to tools/list",
		hung: "hung plugin", cancel: "cancelled call", exit: "nexus mcp exit, plugin without"} {
		for _, h := range table {
			if strings.HasPrefix(h.Event, prefix) {
				r.value = h.Median
				r.detail = fmt.Sprintf("%s: median %.2f ms, p90 %.2f ms, min %.2f ms", h.Event, h.Median, h.P90, h.Min)
			}
		}
		if r.detail == "" {
			r.err = fmt.Errorf("%s printed no %q row (%v):\n%s", cmdline, prefix, runErr, tail(out, 15))
		}
	}
	for _, h := range table {
		if strings.HasPrefix(h.Event, "nexus mcp exit, plugin with GRPCController") {
			exit.detail += fmt.Sprintf("; %s: median %.2f ms", h.Event, h.Median)
		}
		if strings.Contains(h.Event, "in-process") || strings.Contains(h.Event, "no plugins") || strings.Contains(h.Event, "(allow)") {
			hook.detail += fmt.Sprintf("; %s: median %.2f ms", h.Event, h.Median)
		}
	}
	// The script stops before its Go benchmarks when a latency budget is
	// missed; they are then run here.
	if _, _, ok := metricMedian(lines, "BenchmarkDecisionsPluginStart", "ms-median"); !ok || err != nil {
		var cl string
		lines, cl, err = e.goBench("./cmd/nexus", "^(BenchmarkDecisionsPluginStart|BenchmarkMCPPluginToolCall)$", "-benchtime", "200x")
		start.command, call.command = "`"+cl+"`", "`"+cl+"`"
		if err != nil {
			start.err, call.err = err, err
			return rows
		}
	}
	if v, _, ok := metricMedian(lines, "BenchmarkDecisionsPluginStart", "ms-median"); ok {
		start.value, start.detail = v, "the bundled decision store (nexus-plugins serve decisions), median of 200 starts to its first check_decision answer"
	} else {
		start.err = errors.New("no ms-median from BenchmarkDecisionsPluginStart")
	}
	if v, _, ok := metricMedian(lines, "BenchmarkMCPPluginToolCall", "µs-median"); ok {
		call.value, call.detail = v/1000, "check_decision through the built `nexus mcp` to the decision store, median of 200 calls"
	} else {
		call.err = errors.New("no µs-median from BenchmarkMCPPluginToolCall")
	}
	return rows
}

// --- output -------------------------------------------------------------

func (r *row) valueText() string {
	switch {
	case r.err != nil:
		return "error"
	case r.na != "":
		return r.na
	case r.unit == "obs/s":
		return fmt.Sprintf("%s obs/s", thousands(r.value))
	case r.unit == "ratio":
		return fmt.Sprintf("%.2f×", r.value)
	case r.unit == "MiB":
		return fmt.Sprintf("%.1f MiB", r.value)
	case r.value < 1:
		return fmt.Sprintf("%.3f ms", r.value)
	case r.target >= 1000:
		return fmt.Sprintf("%.3f s", r.value/1000)
	}
	return fmt.Sprintf("%.2f ms", r.value)
}

func (r *row) targetText() string {
	switch r.unit {
	case "obs/s":
		return "≥ " + thousands(r.target) + " obs/s"
	case "ratio":
		return fmt.Sprintf("≤ %g×", r.target)
	case "MiB":
		return fmt.Sprintf("≤ %g MiB", r.target)
	}
	if r.target >= 1000 {
		return fmt.Sprintf("≤ %g s", r.target/1000)
	}
	return fmt.Sprintf("≤ %g ms", r.target)
}

func (r *row) resultText() string {
	switch {
	case r.err != nil:
		return "ERROR"
	case r.na != "":
		return "—"
	case r.pass():
		return "PASS"
	}
	return "MISS"
}

func thousands(v float64) string {
	s := fmt.Sprintf("%d", int64(math.Round(v)))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func printTable(w io.Writer, rows []*row, e *env, took time.Duration) {
	load, _ := os.ReadFile("/proc/loadavg")
	fields := strings.Fields(string(load))
	if len(fields) > 3 {
		fields = fields[:3]
	}
	fmt.Fprintf(w, "nexus performance figures — %s, %d CPUs, load average %s, %s, measured in %s\n\n",
		time.Now().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), strings.Join(fields, " "), runtime.Version(), took.Round(time.Second))
	cells := [][]string{{"Figure", "Median", "Target", "Result", "Command"}}
	for _, r := range rows {
		cells = append(cells, []string{r.figure, r.valueText(), r.targetText(), r.resultText(), r.command})
	}
	width := make([]int, len(cells[0]))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	line := func(c []string) {
		for i, s := range c {
			fmt.Fprintf(w, "| %s%s ", s, strings.Repeat(" ", width[i]-len([]rune(s))))
		}
		fmt.Fprintln(w, "|")
	}
	line(cells[0])
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, c := range cells[1:] {
		line(c)
	}
	core := e.core
	if core == "" {
		core = "the built-in nexus-core (no --core)"
	}
	fmt.Fprintln(w, "\nCORE = "+core+"; `nexus` is built like `make build`; proctime = internal/proctime (fork/exec, median wall time).")
	fmt.Fprintf(w, "The projects measured are in %s, on %s (TMPDIR chooses the folder).\n", e.work, fsKind(e.work))
	var lastErr string
	for _, r := range rows {
		switch {
		case r.err != nil && r.err.Error() == lastErr:
			fmt.Fprintf(w, "ERROR %s: the same\n", r.figure)
		case r.err != nil:
			lastErr = r.err.Error()
			fmt.Fprintf(w, "\nERROR %s: %v\n\n", r.figure, r.err)
		case r.detail != "":
			fmt.Fprintf(w, "- %s: %s\n", r.figure, r.detail)
		}
	}
}
