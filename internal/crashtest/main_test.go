package crashtest

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// Environment variables that turn the test binary into a helper process.
const (
	// workerEnv makes the test binary an in-process write worker (worker_test.go).
	workerEnv = "NEXUS_CRASHTEST_WORKER"
	// jailTrapEnv and jailTargetEnv make it a jail: it bind-mounts the trap
	// directory over the target (another harness's namespace) in its own
	// mount namespace, then execs the rest of its arguments (corun_test.go).
	jailTrapEnv   = "NEXUS_CRASHTEST_JAIL_TRAP"
	jailTargetEnv = "NEXUS_CRASHTEST_JAIL_TARGET"
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorker())
	}
	if os.Getenv(jailTrapEnv) != "" {
		runJail() // execs or exits
	}
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

// commands builds cmd/nexus once per test run, the way `make build` does
// (static, stripped): the crash and co-running tests kill and race the
// program users run, not a test double.
var commands testenv.Commands

func nexusBinary(t testing.TB) string {
	t.Helper()
	// The plugin host (nexus-plugins, which runs `nexus decision`) is
	// built beside it, as installed.
	commands.Path(t, "./cmd/nexus-plugins")
	return commands.Path(t, "./cmd/nexus")
}

// nexusEnv is a clean environment for nexus processes: no user
// configuration, the test distribution, the given harness id.
func nexusEnv(t testing.TB, home, harnessID string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NEXUS_CORE_DIR=" + testenv.CoreDir(t),
	}
	if harnessID != "" {
		env = append(env, "NEXUS_HARNESS_ID="+harnessID)
	}
	return env
}

// seed returns the random seed of a test: NEXUS_CRASH_SEED when set (to
// replay a failure), else the clock. It is logged either way.
func seed(t *testing.T) *rand.Rand {
	s := time.Now().UnixNano()
	if v := os.Getenv("NEXUS_CRASH_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("NEXUS_CRASH_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (replay with NEXUS_CRASH_SEED=%d)", s, s)
	return rand.New(rand.NewSource(s))
}

// kills returns how many SIGKILLs a crash scenario delivers: full (CI
// default), a fifth of it with -short, or full scaled by
// NEXUS_CRASH_SCALE (e.g. 10 for a long soak run).
func kills(full int) int {
	n := full
	if testing.Short() {
		n = max(full/5, 5)
	}
	if v, err := strconv.ParseFloat(os.Getenv("NEXUS_CRASH_SCALE"), 64); err == nil && v > 0 {
		n = max(int(float64(full)*v), 1)
	}
	return n
}

// deadline bounds the wall time of one scenario; a scenario that reaches
// it stops early and must still have delivered a third of its kills.
func deadline(full time.Duration) time.Time {
	if v, err := time.ParseDuration(os.Getenv("NEXUS_CRASH_DEADLINE")); err == nil && v > 0 {
		full = v
	}
	return time.Now().Add(full)
}

// killedBySignal reports whether a finished process died of SIGKILL.
func killedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// proc is one nexus process with its own kill timer.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	timer  *time.Timer
}

// startKilled starts cmd and SIGKILLs it after d (d < 0: never).
func startKilled(cmd *exec.Cmd, d time.Duration) (*proc, error) {
	p := &proc{cmd: cmd}
	if cmd.Stdout == nil {
		cmd.Stdout = &p.stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &p.stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if d >= 0 {
		p.timer = time.AfterFunc(d, func() { cmd.Process.Kill() })
	}
	return p, nil
}

// wait waits for the process and reports whether the kill ended it.
func (p *proc) wait() (killed bool, err error) {
	err = p.cmd.Wait()
	if p.timer != nil {
		p.timer.Stop()
	}
	if killedBySignal(p.cmd.ProcessState) {
		return true, nil
	}
	return false, err
}
