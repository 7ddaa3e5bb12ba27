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

// hookRow is one row of the latency tables that scripts/bench-hooks.sh
// and scripts/bench-plugins.sh print.
type hookRow struct {
	Event                 string
	Median, P90, Min, CPU float64 // ms
}

var (
	hookLine   = regexp.MustCompile(`^\s*(.*?\S)\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+\S+\s*$`)
	pluginLine = regexp.MustCompile(`^\s*(.*?\S)\s+\d+\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+\S+\s*$`)
)

// parseHookTable reads the table TestHookLatency logs (event, median, p90,
// min, cpu, budget).
func parseHookTable(r io.Reader) []hookRow {
	var out []hookRow
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := hookLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[2+i], 64)
		}
		out = append(out, hookRow{Event: m[1], Median: v[0], P90: v[1], Min: v[2], CPU: v[3]})
	}
	return out
}

// parsePluginTable reads the table TestPluginLatency logs (case, runs,
// median, p90, min, budget); CPU is not reported there.
func parsePluginTable(r io.Reader) []hookRow {
	var out []hookRow
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := pluginLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var v [3]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[2+i], 64)
		}
		out = append(out, hookRow{Event: m[1], Median: v[0], P90: v[1], Min: v[2]})
	}
	return out
}
