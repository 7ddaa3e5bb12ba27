package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// misbehaveEnv turns the test binary into a child that breaks one rule
// on purpose (TestRulesCatchMisbehaviour): the runner and the checks are
// themselves tested against a known offender.
const misbehaveEnv = "NEXUS_HOSTILE_MISBEHAVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(misbehaveEnv); mode != "" {
		os.Exit(misbehave(mode))
	}
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

// commands holds nexus and nexus-plugins, built once per test binary as
// `make build` builds them, side by side as an installation has them.
var commands testenv.Commands

// misbehave is the offending child: it sleeps, allocates, writes where
// it is told, or answers a PreToolUse with nothing (an allowed write).
func misbehave(mode string) int {
	switch mode {
	case "sleep":
		d, err := time.ParseDuration(os.Getenv("NEXUS_HOSTILE_SLEEP"))
		if err != nil {
			d = time.Minute
		}
		time.Sleep(d)
	case "daemon":
		// A process in a session of its own that keeps stdout open
		// after this one has exited.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), misbehaveEnv+"=sleep", "NEXUS_HOSTILE_SLEEP=3s")
		cmd.Stdout = os.Stdout
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "alloc":
		n, _ := strconv.Atoi(os.Getenv("NEXUS_HOSTILE_ALLOC_MB"))
		b := make([][]byte, 0, n)
		for range n {
			c := make([]byte, 1<<20)
			for i := range c {
				c[i] = 1
			}
			b = append(b, c)
		}
		fmt.Println(len(b))
	case "write":
		if err := os.WriteFile(os.Getenv("NEXUS_HOSTILE_WRITE"), []byte("x"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "echo":
		fmt.Println(os.Getenv("NEXUS_HOSTILE_ECHO"))
	case "allow":
		// A hook that answers nothing: the host proceeds with the call.
	case "panic":
		panic("on purpose")
	}
	return 0
}
