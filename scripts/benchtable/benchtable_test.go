package main

import (
	"strings"
	"testing"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/nexus-harness/nexus/harness/mcpserver
cpu: Intel(R) Xeon(R)
BenchmarkStdioToolCall/context-2         	    1000	    152340 ns/op	         0.1100 ms-median	         0.9000 ms-p99
BenchmarkStdioToolCall/task_update-2     	    1000	   2712345 ns/op	         2.700 ms-median	        33.00 ms-p99
BenchmarkCheckDecisionWarm/decisions=1000-2   300   140000 ns/op
BenchmarkCheckDecisionWarm/decisions=1000-2   300   160000 ns/op
BenchmarkCheckDecisionWarm/decisions=1000-2   300   150000 ns/op
BenchmarkObserve 	    5000	    119876 ns/op	      8342 obs/s	       110.0 cpu-µs/op
BenchmarkBroken-2 notanumber 3 ns/op
PASS
ok  	github.com/nexus-harness/nexus/harness/mcpserver	3.1s
`
	lines, err := parseBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	for _, c := range []struct {
		name, unit string
		want       float64
		n          int
	}{
		{"BenchmarkStdioToolCall/context", "ms-median", 0.11, 1},
		{"BenchmarkStdioToolCall/task_update", "ms-p99", 33, 1},
		{"BenchmarkCheckDecisionWarm/decisions=1000", "ns/op", 150000, 3},
		{"BenchmarkObserve", "obs/s", 8342, 1},
	} {
		v, n, ok := metricMedian(lines, c.name, c.unit)
		if !ok || v != c.want || n != c.n {
			t.Errorf("%s %s = %v (%d runs, %v), want %v (%d)", c.name, c.unit, v, n, ok, c.want, c.n)
		}
	}
	if _, _, ok := metricMedian(lines, "BenchmarkStdioToolCall/context", "obs/s"); ok {
		t.Error("a metric the benchmark does not report was found")
	}
	if _, _, ok := metricMedian(lines, "BenchmarkStdioToolCall", "ms-median"); ok {
		t.Error("a parent name matched its sub-benchmarks")
	}
	if _, err := parseBench(strings.NewReader("BenchmarkX-2  10  abc ns/op\n")); err == nil {
		t.Error("a malformed value passed")
	}
}

// A benchmark whose child process writes to stderr splits its result line:
// the name, the child's output, then the figures.
func TestParseBenchSplitLine(t *testing.T) {
	out := "BenchmarkStdioToolCall/context-2         \tnexus mcp: some plugin tools are not served\n" +
		"     100\t    175243 ns/op\t         0.1760 ms-median\t         0.3280 ms-p99\n" +
		"nexus mcp: another line\n" +
		"BenchmarkStdioToolCall/task_update-2     \tnexus mcp: some plugin tools are not served\n" +
		"nexus mcp: and another\n" +
		"     100\t   1633254 ns/op\t         1.599 ms-median\t         2.179 ms-p99\n"
	lines, err := parseBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, ok := metricMedian(lines, "BenchmarkStdioToolCall/context", "ms-median"); !ok || v != 0.176 {
		t.Errorf("context: %v %v (%+v)", v, ok, lines)
	}
	if v, _, ok := metricMedian(lines, "BenchmarkStdioToolCall/task_update", "ms-median"); !ok || v != 1.599 {
		t.Errorf("task_update: %v %v (%+v)", v, ok, lines)
	}
}

func TestParsePluginTable(t *testing.T) {
	out := `    plugin_bench_test.go:290: 
        plugin latency, wall time per process (load average: 1.0 1.0 1.0 1/100 1)
        case                                                        runs    median       p90       min  budget
        nexus mcp: start to tools/list, 5 plugins + store             34   61.20ms   70.00ms   55.10ms   150ms
        PreToolUse Bash, 1 subscriber, hook server (deny)            100    6.10ms    7.00ms    5.00ms    15ms
        (reference) PreToolUse Bash, no plugins (plain hook)         100    4.90ms    5.50ms    4.00ms       -
`
	rows := parsePluginTable(strings.NewReader(out))
	if len(rows) != 3 || rows[0].Event != "nexus mcp: start to tools/list, 5 plugins + store" || rows[0].Median != 61.2 ||
		rows[1].P90 != 7 || rows[2].Min != 4 {
		t.Errorf("rows %+v", rows)
	}
	if len(parseHookTable(strings.NewReader(out))) != 0 {
		t.Error("the hook table parser read the plugin table")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{4, 1}, 2.5}, {[]float64{9, 1, 5}, 5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseHookTable(t *testing.T) {
	out := `=== RUN   TestHookLatency
    hook_bench_test.go:170: 
        nexus hook wall time per process, 300 runs each (load average: 1.2 1.0 0.9 1/200 123)
        event                                                 median       p90       min       cpu  budget
        PostToolUse (engineer Edit)                           3.10ms    4.20ms    2.50ms    2.90ms     5ms
        PreToolUse (architect Edit, denied)                   3.40ms    4.00ms    2.70ms    3.00ms     5ms
        UserPromptSubmit ([plan], nx-plan body injected)      4.80ms    6.10ms    3.90ms    4.20ms    10ms
        (reference) nexus version                             1.50ms    2.00ms    1.20ms    1.10ms       -
        median, p90, min: wall time per process; cpu: median user+system CPU time per process
--- PASS: TestHookLatency (9.81s)
`
	rows := parseHookTable(strings.NewReader(out))
	want := map[string]float64{"PostToolUse (engineer Edit)": 3.1, "PreToolUse (architect Edit, denied)": 3.4,
		"UserPromptSubmit ([plan], nx-plan body injected)": 4.8, "(reference) nexus version": 1.5}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if want[r.Event] != r.Median {
			t.Errorf("%q = %v, want %v", r.Event, r.Median, want[r.Event])
		}
	}
	if r := rows[0]; r.P90 != 4.2 || r.Min != 2.5 || r.CPU != 2.9 {
		t.Errorf("p90, min, cpu of %+v", r)
	}
}

func TestRowVerdict(t *testing.T) {
	for _, c := range []struct {
		r    row
		want string
		text string
	}{
		{row{target: 5, unit: "ms", value: 4.99}, "PASS", "4.99 ms"},
		{row{target: 5, unit: "ms", value: 5.01}, "MISS", "5.01 ms"},
		{row{target: 1, unit: "ms", value: 0.1234}, "PASS", "0.123 ms"},
		{row{target: 5000, unit: "obs/s", atLeast: true, value: 8342.4}, "PASS", "8,342 obs/s"},
		{row{target: 5000, unit: "obs/s", atLeast: true, value: 4999}, "MISS", "4,999 obs/s"},
		{row{target: 15, unit: "ms", na: "n/a (not measured yet)"}, "—", "n/a (not measured yet)"},
		{row{target: 3000, unit: "ms", value: 1153.74}, "PASS", "1.154 s"},
	} {
		if got := c.r.resultText(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.r, got, c.want)
		}
		if got := c.r.valueText(); got != c.text {
			t.Errorf("%+v: %q, want %q", c.r, got, c.text)
		}
	}
	if got := (&row{target: 3000, unit: "ms"}).targetText(); got != "≤ 3 s" {
		t.Errorf("target %q", got)
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands %q", got)
	}
}
