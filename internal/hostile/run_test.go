package hostile

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// The limits of one step (the rules): the process group is
// killed at either.
const (
	maxWall = 5 * time.Second
	maxRSS  = 128 << 20
)

// rssrun is the built ./internal/testenv/rssrun, through which every
// child is started and measured.
var rssrun string

// run runs one nexus process within the suite's limits.
func run(bin string, args []string, dir string, env []string, stdin []byte) testenv.BoundedOutcome {
	return testenv.RunBounded(testenv.Bounded{RSSRun: rssrun, Bin: bin, Args: args, Dir: dir, Env: env, Stdin: stdin, Wall: maxWall, RSS: maxRSS})
}

// killStrays kills every process whose command line names root: what the
// steps of a scenario left running in sessions of their own (the plugin
// hook server a hook starts, detached, lives ten minutes by design).
func killStrays(root string) {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(root+"/")) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
