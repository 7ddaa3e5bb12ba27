package store

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionstest"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// benchSizes are the store sizes of the decision benchmarks; 100,000 is
// added with NEXUS_BENCH_100K=1 (generating it takes about a minute).
func benchSizes() []int {
	if os.Getenv("NEXUS_BENCH_100K") != "" {
		return []int{1000, 10000, 100000}
	}
	return []int{1000, 10000}
}

func syntheticStore(b *testing.B, n int) *FS {
	b.Helper()
	dir, err := decisionstest.Store(n)
	if err != nil {
		b.Fatal(err)
	}
	fs, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fs.Close() })
	return fs
}

func check(b *testing.B, fs *FS) {
	c, err := kernel.Decisions(fs)
	if err != nil {
		b.Fatal(err)
	}
	res, err := kernel.Check(c, decisionstest.Approach, decisionstest.Context)
	if err != nil || len(res.Related) != kernel.CheckTopK {
		b.Fatalf("check = %+v, %v", res, err)
	}
}

// reportMedian adds ms-median and ms-max of per-call durations.
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/1e6, "ms-median")
	b.ReportMetric(float64(d[len(d)-1])/1e6, "ms-max")
}

// BenchmarkCheckDecisionWarm measures check_decision back to back on a
// store whose corpus is cached: the change check and the scoring.
func BenchmarkCheckDecisionWarm(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			fs := syntheticStore(b, n)
			check(b, fs)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				check(b, fs)
			}
		})
	}
}

// BenchmarkCheckDecisionPaced measures check_decision called the way
// agents call it, 2.3 s apart (the pause is not timed): nothing may
// re-list or re-stat the store between calls. Run with -benchtime Nx.
func BenchmarkCheckDecisionPaced(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			fs := syntheticStore(b, n)
			check(b, fs)
			var d []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(2300 * time.Millisecond)
				b.StartTimer()
				t0 := time.Now()
				check(b, fs)
				d = append(d, time.Since(t0))
			}
			reportMedian(b, d)
		})
	}
}

// BenchmarkCheckDecisionCold measures a fresh process's first answer
// (open the store, build the corpus, check), with the persistent index
// warm (index=warm) and without one (index=none).
func BenchmarkCheckDecisionCold(b *testing.B) {
	for _, n := range benchSizes() {
		for _, mode := range []string{"warm", "none"} {
			b.Run(fmt.Sprintf("decisions=%d/index=%s", n, mode), func(b *testing.B) {
				dir, err := decisionstest.Store(n)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "none" {
					b.Setenv("NEXUS_DECISIONS_INDEX_DIR", "off")
				} else {
					fs, _ := Open(dir)
					check(b, fs) // writes the index
					fs.Close()
				}
				var d []time.Duration
				for i := 0; i < b.N; i++ {
					runtime.GC()
					t0 := time.Now()
					fs, err := Open(dir)
					if err != nil {
						b.Fatal(err)
					}
					check(b, fs)
					d = append(d, time.Since(t0))
					fs.Close()
				}
				reportMedian(b, d)
			})
		}
	}
}

// BenchmarkProposeRecheck measures the check after one decision file
// changed (what every propose_decision does): one file re-read, the
// index rebuilt from cached tokens.
func BenchmarkProposeRecheck(b *testing.B) {
	dir := b.TempDir()
	if err := decisionstest.Write(dir, 10000); err != nil {
		b.Fatal(err)
	}
	fs, _ := Open(dir)
	defer fs.Close()
	check(b, fs)
	p := dir + "/decisions/005-d.md"
	orig, _ := os.ReadFile(p)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.WriteFile(p, append(orig, fmt.Sprintf("\nEdit %d.\n", i)...), 0o644)
		b.StartTimer()
		check(b, fs)
	}
}
