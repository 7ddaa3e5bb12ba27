package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// benchLine is one result line of `go test -bench`.
type benchLine struct {
	Name    string             // without the -GOMAXPROCS suffix
	Metrics map[string]float64 // unit → value ("ns/op", "ms-median", …)
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads the result lines of `go test -bench` output (one per
// benchmark and -count repetition), ignoring everything else. A result
// whose name and figures were split by output the benchmark's own child
// processes wrote in between (the name, then that output, then the
// figures on a line of their own) is joined back.
func parseBench(r io.Reader) ([]benchLine, error) {
	var out []benchLine
	pending := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		name := ""
		switch {
		case len(f) > 0 && strings.HasPrefix(f[0], "Benchmark"):
			name, f = f[0], f[1:]
			if len(f) == 0 || !isCount(f[0]) {
				pending = name // the figures follow on a later line
				continue
			}
		case pending != "" && len(f) > 0 && isCount(f[0]):
			name, pending = pending, ""
		default:
			continue
		}
		// <iterations>  <value> <unit>  [<value> <unit>]...
		if len(f) < 3 || len(f)%2 != 1 {
			continue
		}
		b := benchLine{Name: procSuffix.ReplaceAllString(name, ""), Metrics: map[string]float64{}}
		for i := 1; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: value %q: %v", name, f[i], err)
			}
			b.Metrics[f[i+1]] = v
		}
		out = append(out, b)
	}
	return out, sc.Err()
}

func isCount(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// metricMedian is the median, over the repetitions of benchmark name, of
// one metric; ok is false when the benchmark or metric is absent.
func metricMedian(lines []benchLine, name, unit string) (float64, int, bool) {
	var vs []float64
	for _, l := range lines {
		if l.Name != name {
			continue
		}
		if v, ok := l.Metrics[unit]; ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, 0, false
	}
	return median(vs), len(vs), true
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// hookRow is one case of the latency tests behind scripts/bench-hooks.sh
// (TestHookLatency…) and scripts/bench-plugins.sh (TestPluginLatency),
// which print each case as a benchmark result line:
// BenchmarkHookLatency/<case, words joined by _>  <runs>  <ms> ms-median …
type hookRow struct {
	Event                 string
	Median, P90, Min, CPU float64 // ms; CPU is 0 where not reported
}

// latencyRows returns the cases of one latency benchmark (bench is its
// name: BenchmarkHookLatency, BenchmarkPluginLatency), in output order.
func latencyRows(lines []benchLine, bench string) []hookRow {
	var out []hookRow
	for _, l := range lines {
		name, ok := strings.CutPrefix(l.Name, bench+"/")
		if _, timed := l.Metrics["ms-median"]; !ok || !timed {
			continue // a ratio line (x-median) is read by metricMedian
		}
		out = append(out, hookRow{Event: strings.ReplaceAll(name, "_", " "),
			Median: l.Metrics["ms-median"], P90: l.Metrics["ms-p90"], Min: l.Metrics["ms-min"], CPU: l.Metrics["ms-cpu"]})
	}
	return out
}
