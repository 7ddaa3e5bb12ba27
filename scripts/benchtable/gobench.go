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
// benchmark and -count repetition), ignoring everything else.
func parseBench(r io.Reader) ([]benchLine, error) {
	var out []benchLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// Benchmark<Name>  <iterations>  <value> <unit>  [<value> <unit>]...
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		b := benchLine{Name: procSuffix.ReplaceAllString(f[0], ""), Metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: value %q: %v", sc.Text(), f[i], err)
			}
			b.Metrics[f[i+1]] = v
		}
		out = append(out, b)
	}
	return out, sc.Err()
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

// hookRow is one event of scripts/bench-hooks.sh's table.
type hookRow struct {
	Event                 string
	Median, P90, Min, CPU float64 // ms
}

var hookLine = regexp.MustCompile(`^\s*(.*?\S)\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+(\d+\.\d+)ms\s+\S+\s*$`)

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
