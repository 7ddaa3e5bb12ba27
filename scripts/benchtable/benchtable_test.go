package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

func TestLatencyRows(t *testing.T) {
	// What scripts/bench-hooks.sh and bench-plugins.sh print: the table
	// for people (ignored) and one benchmark result line per case, with
	// other output in between.
	out := `=== RUN   TestHookLatency
    hook_bench_test.go:170: 
        event                                                 median       p90       min       cpu  budget
        PostToolUse (engineer Edit)                           9.10ms    9.20ms    9.50ms    9.90ms     5ms
BenchmarkHookLatency/PostToolUse_(engineer_Edit)	300	3.100 ms-median	4.200 ms-p90	2.500 ms-min	2.900 ms-cpu
BenchmarkHookLatency/PreToolUse_(architect_Edit,_denied)	300	3.400 ms-median	4.000 ms-p90	2.700 ms-min	3.000 ms-cpu
BenchmarkHookLatency/(reference)_nexus_version	300	1.500 ms-median	2.000 ms-p90	1.200 ms-min	1.100 ms-cpu
--- PASS: TestHookLatency (9.81s)
BenchmarkPluginLatency/nexus_mcp:_start_to_tools/list,_5_plugins_+_store	34	61.200 ms-median	70.000 ms-p90	55.100 ms-min
`
	lines, err := parseBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	hooks := latencyRows(lines, "BenchmarkHookLatency")
	want := []hookRow{
		{"PostToolUse (engineer Edit)", 3.1, 4.2, 2.5, 2.9},
		{"PreToolUse (architect Edit, denied)", 3.4, 4, 2.7, 3},
		{"(reference) nexus version", 1.5, 2, 1.2, 1.1},
	}
	if !reflect.DeepEqual(hooks, want) {
		t.Errorf("hook rows %+v, want %+v", hooks, want)
	}
	plugins := latencyRows(lines, "BenchmarkPluginLatency")
	if len(plugins) != 1 || plugins[0].Event != "nexus mcp: start to tools/list, 5 plugins + store" || plugins[0].Median != 61.2 || plugins[0].CPU != 0 {
		t.Errorf("plugin rows %+v", plugins)
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

// The cold rows' change by "another process" gives a valid file that
// differs from the one before in one task's status, or in one more cycle.
func TestChangeAsAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	if err := peerProject(dir, 20); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return v
	}
	tasks := ".nexus/state/tasks.json"
	for round := range 5 {
		before := read(tasks)["tasks"].([]any)
		if err := changeAsAnotherProcess(dir, tasksRewritten, round); err != nil {
			t.Fatal(err)
		}
		after := read(tasks)["tasks"].([]any)
		changed := 0
		for i := range before {
			if !reflect.DeepEqual(before[i], after[i]) {
				changed++
				b, a := before[i].(map[string]any), after[i].(map[string]any)
				if b["status"] == a["status"] {
					t.Fatalf("round %d: task %d changed elsewhere than its status", round, i)
				}
			}
		}
		if changed != 1 {
			t.Fatalf("round %d: %d tasks changed, want 1", round, changed)
		}
	}
	history := ".nexus/history.json"
	for range 2 {
		n := len(read(history)["cycles"].([]any))
		if err := changeAsAnotherProcess(dir, historyAppended, 0); err != nil {
			t.Fatal(err)
		}
		cycles := read(history)["cycles"].([]any)
		if len(cycles) != n+1 || cycles[n].(map[string]any)["plan"].(map[string]any)["id"] != float64(n+1) {
			t.Fatalf("%d cycles after appending to %d", len(cycles), n)
		}
	}
}
