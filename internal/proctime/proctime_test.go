package proctime

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the measured program.
const helperEnv = "PROCTIME_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "sleep":
		time.Sleep(20 * time.Millisecond)
		os.Exit(0)
	case "stdin":
		b, _ := io.ReadAll(os.Stdin)
		if string(b) != "hello" {
			os.Exit(3)
		}
		os.Stdout.WriteString("got hello")
		os.Exit(0)
	case "write":
		// Output goes to /dev/null in measured runs; writing must work.
		if _, err := os.Stdout.WriteString("out"); err != nil {
			os.Exit(5)
		}
		if _, err := os.Stderr.WriteString("err"); err != nil {
			os.Exit(6)
		}
		os.Exit(0)
	case "fail":
		os.Exit(4)
	}
}

func helper(t *testing.T, mode string) Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled test binary sleeps 1 s at exit unless told not to.
	return Spec{Name: mode, Path: exe, Env: []string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}}
}

func TestMeasure(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	sleep := helper(t, "sleep")
	stdin := helper(t, "stdin")
	stdin.Stdin = in
	checked := 0
	stdin.Check = func(out, _ []byte) error {
		checked++
		if string(out) != "got hello" {
			return errors.New("no greeting")
		}
		return nil
	}
	res, err := Measure(context.Background(), []Spec{sleep, stdin, helper(t, "write")}, Options{Runs: 7, Warmup: 2})
	if err != nil {
		t.Fatal(err)
	}
	if checked != 2 {
		t.Errorf("check ran %d times, want once per warm-up run", checked)
	}
	for _, r := range res {
		if r.Runs != 7 || r.Min > r.Median || r.Median > r.P90 || r.Min <= 0 {
			t.Errorf("%+v", r)
		}
	}
	// The timer covers the whole process: a 20 ms sleeper takes longer
	// than 20 ms, and longer than a process that only reads stdin.
	if res[0].Min < 20*time.Millisecond || res[0].Median <= res[1].Median {
		t.Errorf("sleeper %+v, reader %+v", res[0], res[1])
	}
}

func TestMeasureFailures(t *testing.T) {
	ctx := context.Background()
	if _, err := Measure(ctx, []Spec{helper(t, "fail")}, Options{Runs: 1, Warmup: -1}); err == nil || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("failing run: %v", err)
	}
	if _, err := Measure(ctx, []Spec{helper(t, "fail")}, Options{Runs: 1}); err == nil {
		t.Error("failing warm-up run passed")
	}
	bad := helper(t, "stdin") // no stdin: exits 3 in warm-up
	if _, err := Measure(ctx, []Spec{bad}, Options{Runs: 1}); err == nil {
		t.Error("warm-up without the expected stdin passed")
	}
	ok := helper(t, "sleep")
	ok.Check = func([]byte, []byte) error { return errors.New("wrong reply") }
	if _, err := Measure(ctx, []Spec{ok}, Options{Runs: 1}); err == nil || !strings.Contains(err.Error(), "wrong reply") {
		t.Errorf("check failure: %v", err)
	}
	res, err := Measure(ctx, []Spec{helper(t, "sleep")}, Options{Runs: 1000, Warmup: -1, Deadline: time.Now()})
	if err != nil || res[0].Runs != 3 {
		t.Errorf("deadline: %+v %v", res, err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{5}, 5}, {[]time.Duration{1, 3}, 2}, {[]time.Duration{1, 2, 9}, 2}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
