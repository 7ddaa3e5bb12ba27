package memory

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// BenchmarkObserve measures one process observing reads against a log of
// 500 files (target: at least 5,000 observations per second).
//
//	go test ./memory -run '^$' -bench Observe -benchtime 5000x -count 5
func BenchmarkObserve(b *testing.B) {
	const files = 500
	now := time.Now()
	p := newProject(b, Options{}, now)
	paths := make([]string, files)
	recs := make([]state.MemoryAccess, files)
	for i := range paths {
		paths[i] = p.write(fmt.Sprintf("empirical-bench-file-%03d.md", i), "x")
		recs[i] = state.MemoryAccess{Path: paths[i], LastAccessedTS: state.Format(now), AccessCount: 3, LastAgent: "researcher"}
	}
	p.setRecords(recs...)
	ctx := context.Background()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.m.Observe(ctx, paths[i%files], "engineer", now); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "obs/s")
	// On a loaded machine wall time mostly measures waiting for a CPU;
	// the process's own CPU time per observation is what it costs.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the user + system CPU time this process and its finished
// children (git) have used.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// BenchmarkReport measures the gc report over 1,000 and 10,000 memory
// files in a git repository with 20 completed cycles, half of the files
// never read (so their first commits come from git log).
//
//	go test ./memory -run '^$' -bench Report -benchtime 20x -count 5
func BenchmarkReport(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) { benchReport(b, files) })
	}
}

func benchReport(b *testing.B, files int) {
	now := time.Now().UTC()
	p := newProject(b, autoGC, now)
	var recs []state.MemoryAccess
	for i := 0; i < files; i++ {
		path := p.write(fmt.Sprintf("pattern-report-file-%05d.md", i), "# report file\n\nsome content\n")
		if i%2 == 0 {
			recs = append(recs, state.MemoryAccess{Path: path, LastAccessedTS: state.Format(now.Add(-time.Duration(i) * time.Hour)), AccessCount: int64(i % 4), LastAgent: "lead"})
		}
	}
	p.setRecords(recs...)
	var cycles []time.Time
	for i := 0; i < 20; i++ {
		cycles = append(cycles, now.Add(-time.Duration(i)*48*time.Hour))
	}
	p.setHistory(cycles...)
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.invalid",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.invalid"}
	git(b, p.dir, env, "init", "-q")
	git(b, p.dir, env, "add", "-A")
	git(b, p.dir, env, "commit", "-q", "-m", "memory")
	ctx := context.Background()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := p.m.Report(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Files) != files {
			b.Fatalf("%d files", len(rep.Files))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
