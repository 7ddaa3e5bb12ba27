//go:build e2e

package e2ekit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// BuildCommands builds nexus and nexus-plugins as `make build` builds them
// (static, stripped: timings match an install) into a new folder, for a
// package's TestMain; remove the folder when the tests are done.
func BuildCommands(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	for _, pkg := range []string{"nexus", "nexus-plugins"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = filepath.Dir(dir)
	}
}

// PinnedCLI is a client CLI that scripts/e2e/setup.d installed into
// .e2e/<dir>/node_modules/.bin/<name> (or the path in envVar); the test
// fails, never skips, without it.
func PinnedCLI(t testing.TB, dir, name, envVar, setup string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	p := filepath.Join(testenv.ModuleRoot(t), ".e2e", dir, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the pinned %s CLI is not installed (%v): run `make e2e` or scripts/e2e/setup.d/%s", name, err, setup)
	}
	return p
}

// ClaudeBin is the pinned Claude Code CLI.
func ClaudeBin(t testing.TB) string {
	return PinnedCLI(t, "claude-code", "claude", "NEXUS_E2E_CLAUDE", "20-claude-code.sh")
}

// CodexBin is the pinned Codex CLI.
func CodexBin(t testing.TB) string {
	return PinnedCLI(t, "codex", "codex", "NEXUS_E2E_CODEX", "40-codex.sh")
}

// Tail keeps the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Median of durations.
func Median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ms renders a duration in whole milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// Figures prints a report and appends it to $NEXUS_E2E_FIGURES when set
// (scripts/e2e/run.sh prints that file at the end of make e2e).
func Figures(t testing.TB, report string) {
	t.Helper()
	t.Log("\n" + report)
	fmt.Print(report)
	path := os.Getenv("NEXUS_E2E_FIGURES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(report); err != nil {
		t.Fatal(err)
	}
}

// HookTimerArg makes a test binary a timing wrapper around one hook
// process: `<test binary> -nexus-e2e-hooktimer LOG CMD ARGS...` runs CMD
// with this process's standard streams and appends CMD's wall time in
// nanoseconds and its last argument (the event) to LOG. The wrapper's own
// start-up is outside the span. A TestMain calls HookTimerMain first.
const HookTimerArg = "-nexus-e2e-hooktimer"

// HookTimerMain runs the timing wrapper and exits when the test binary was
// started as one; otherwise it returns.
func HookTimerMain() {
	if len(os.Args) > 3 && os.Args[1] == HookTimerArg {
		os.Exit(hookTimer(os.Args[2], os.Args[3:]))
	}
}

func hookTimer(log string, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if f, ferr := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); ferr == nil {
		fmt.Fprintf(f, "%d %s\n", wall.Nanoseconds(), argv[len(argv)-1])
		f.Close()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// HookTimes reads a hook timer log: each hook process's wall time by event,
// in order.
func HookTimes(t testing.TB, log string) map[string][]time.Duration {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("no hook ran under the timer: %v", err)
	}
	defer f.Close()
	out := map[string][]time.Duration{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ns, event, _ := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			t.Fatalf("hook timer line %q: %v", sc.Text(), err)
		}
		out[event] = append(out[event], time.Duration(v))
	}
	return out
}

// Sum adds durations.
func Sum(ds []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s
}
