// Package proctime measures whole processes the way a caller that spawns
// them pays for them: fork/exec, start-up, work, exit. It is the timer
// behind nexus's process-level figures (`nexus version`, a hook, a
// conformance run): a Go loop over os.StartProcess with stdin read from a
// file and output discarded, so the timer adds no pipes, no shell and no
// interpreter of its own to what it measures.
package proctime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"
)

// Spec is one command to time.
type Spec struct {
	Name string   // label in results
	Path string   // executable
	Args []string // arguments, without the program name
	Env  []string // nil = this process's environment
	Dir  string   // working directory ("" = this process's)
	// Stdin is the file fed on standard input ("" = /dev/null).
	Stdin string
	// Check, when set, sees the output of every warm-up run and fails the
	// measurement when it returns an error (a benchmark of a command that
	// does not do its job measures nothing). Measured runs discard output.
	Check func(stdout, stderr []byte) error
}

// Result is the distribution of one Spec's wall times.
type Result struct {
	Name   string
	Runs   int
	Median time.Duration
	P90    time.Duration
	Min    time.Duration
	// CPU is the median user + system CPU time of the process.
	CPU time.Duration
}

// Options shape a measurement.
type Options struct {
	Runs   int // measured runs per spec (default 100)
	Warmup int // unmeasured, checked runs per spec first (default 5)
	// Deadline, when set, stops measuring early (with at least 3 runs per
	// spec) so a slow machine finishes in bounded time.
	Deadline time.Time
}

// Measure times every spec: warm-up runs first, then the measured runs,
// the specs taking turns so a change of machine load during the run
// affects them alike. A run that exits non-zero is an error.
func Measure(ctx context.Context, specs []Spec, o Options) ([]Result, error) {
	if o.Runs <= 0 {
		o.Runs = 100
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 5
	}
	// Read-write: it is stdout and stderr as well (a program whose writes
	// fail may exit early or non-zero).
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	for i := 0; i < o.Warmup; i++ {
		for _, s := range specs {
			if err := warm(ctx, s); err != nil {
				return nil, err
			}
		}
	}
	walls := make([][]time.Duration, len(specs))
	cpus := make([][]time.Duration, len(specs))
	for i := 0; i < o.Runs; i++ {
		if i >= 3 && !o.Deadline.IsZero() && time.Now().After(o.Deadline) {
			break
		}
		for j, s := range specs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			wall, cpu, err := once(s, null)
			if err != nil {
				return nil, err
			}
			walls[j] = append(walls[j], wall)
			cpus[j] = append(cpus[j], cpu)
		}
	}
	out := make([]Result, len(specs))
	for j, s := range specs {
		w, c := walls[j], cpus[j]
		sortDurations(w)
		sortDurations(c)
		out[j] = Result{Name: s.Name, Runs: len(w), Median: Median(w), P90: w[min(len(w)-1, len(w)*9/10)], Min: w[0], CPU: Median(c)}
	}
	return out, nil
}

func warm(ctx context.Context, s Spec) error {
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Env, cmd.Dir = s.Env, s.Dir
	if s.Stdin != "" {
		f, err := os.Open(s.Stdin)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v\n%s", label(s), err, stderr.Bytes())
	}
	if s.Check != nil {
		if err := s.Check(stdout.Bytes(), stderr.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", label(s), err)
		}
	}
	return nil
}

// once runs s one time; the clock covers os.StartProcess to Wait.
func once(s Spec, null *os.File) (wall, cpu time.Duration, err error) {
	in := null
	if s.Stdin != "" {
		if in, err = os.Open(s.Stdin); err != nil {
			return 0, 0, err
		}
		defer in.Close()
	}
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	attr := &os.ProcAttr{Dir: s.Dir, Env: env, Files: []*os.File{in, null, null}}
	argv := append([]string{s.Path}, s.Args...)
	start := time.Now()
	p, err := os.StartProcess(s.Path, argv, attr)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", label(s), err)
	}
	st, err := p.Wait()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", label(s), err)
	}
	if !st.Success() {
		return 0, 0, fmt.Errorf("%s: %s (run it by hand to see why)", label(s), st)
	}
	return wall, st.UserTime() + st.SystemTime(), nil
}

func label(s Spec) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Path
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

// Median returns the median of sorted durations (the mean of the middle
// two for an even count); zero for none.
func Median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
