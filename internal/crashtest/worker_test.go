package crashtest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/schema"
)

// The worker protocol, one line each on stdout:
//
//	B <kind> <agent> [<file>]   the worker starts this write
//	A                           the write it started returned without error
//
// A write is acknowledged by its A line, written before the next B: the
// parent knows every acknowledged write and the one in flight when the
// kill lands.
const (
	workerProjectEnv = "NEXUS_CRASHTEST_PROJECT"
	workerSeedEnv    = "NEXUS_CRASHTEST_SEED"
	workerMemEnv     = "NEXUS_CRASHTEST_MEMORY" // memory files, separated by newlines
)

// runWorker is the test binary as a write worker: it runs the lifecycle
// engine and the memory lifecycle in-process, the code `nexus hook` runs,
// in a loop until it is killed: subagent start, tool-log appends (Write
// calls through PostToolUse), memory-read observations, subagent stop.
func runWorker() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	proj := os.Getenv(workerProjectEnv)
	id := os.Getenv(workerEnv)
	n, _ := strconv.ParseInt(os.Getenv(workerSeedEnv), 10, 64)
	rng := rand.New(rand.NewSource(n))
	mems := strings.Split(os.Getenv(workerMemEnv), "\n")
	he, err := harness.New(harness.Options{Project: proj, CoreDir: os.Getenv("NEXUS_CORE_DIR")})
	if err != nil {
		return fail(err)
	}
	mem, err := memory.New(memory.Options{Store: he.Store, Policy: he.Core.MemoryPolicy(), MergeThreshold: 0.35, ToolPrefix: "nx_"})
	if err != nil {
		return fail(err)
	}
	lc := lifecycle.New(lifecycle.Options{Store: he.Store, Core: he.Core, ToolPrefix: "nx_", Host: claude.Host{}.Profile(host.Env{Project: proj}),
		Tools: he, ToolClasses: he.ToolClasses(), Memory: mem})
	ctx := context.Background()
	say := func(format string, a ...any) {
		// One write call per line, unbuffered: what the parent reads is
		// what the worker had done when it was killed.
		os.Stdout.WriteString(fmt.Sprintf(format, a...) + "\n")
	}
	for agent := 1; ; agent++ {
		name := fmt.Sprintf("%s-a%d", id, agent)
		say("B start %s", name)
		if _, err := lc.Handle(ctx, lifecycle.Event{Name: lifecycle.SubagentSpawn, AgentID: name, AgentType: "nexus:engineer"}); err != nil {
			return fail(err)
		}
		say("A")
		for c := 0; c < 6; c++ {
			if rng.Intn(2) == 0 {
				f := filepath.Join(proj, "src", name, fmt.Sprintf("f%d.go", c))
				say("B write %s %s", name, f)
				ev := lifecycle.Event{Name: lifecycle.PostToolUse, AgentID: name, AgentType: "nexus:engineer", Tool: "Write",
					ToolInput: map[string]any{"file_path": f, "content": "x"}}
				if _, err := lc.Handle(ctx, ev); err != nil {
					return fail(err)
				}
			} else {
				f := mems[rng.Intn(len(mems))]
				say("B read %s %s", name, f)
				if err := mem.Observe(ctx, f, name, time.Now()); err != nil {
					return fail(err)
				}
			}
			say("A")
		}
		say("B stop %s", name)
		msg := "done " + name
		if _, err := lc.Handle(ctx, lifecycle.Event{Name: lifecycle.SubagentComplete, AgentID: name, AgentType: "nexus:engineer", LastMessage: &msg}); err != nil {
			return fail(err)
		}
		say("A")
	}
}

// TestCrashInProcess SIGKILLs two worker processes (this test binary
// re-executed) that run the hook code paths in a tight loop against one
// project: tracker rewrites, tool-log appends and memory-access upserts
// (the exchange fast path). Because the workers do nothing but write,
// almost every kill lands inside a write. After every kill the files parse
// and validate, every acknowledged write is on disk, and the write in
// flight is there at most once. Kills: 100 (20 with -short).
func TestCrashInProcess(t *testing.T) {
	t.Parallel()
	rng := seed(t)
	sch := schema.NewCoreSet(testenv.CoreDir(t))
	proj := t.TempDir()
	l, _ := state.NewLayout(proj, "")
	var mems []string
	for i := 0; i < 3; i++ {
		f := filepath.Join(l.MemoryDir(), fmt.Sprintf("empirical-worker-%d.md", i))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("# w\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mems = append(mems, f)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	led := newHookLedger(proj)
	led.readsLogged = false
	var mu sync.Mutex // guards led while two workers report
	want := kills(100)
	stop := deadline(2 * time.Minute)
	killed, acked, round := 0, 0, 0
	residue := map[string]bool{}
	for killed < want && time.Now().Before(stop) {
		round++
		var wg sync.WaitGroup
		errs := make(chan string, 2)
		for w := 0; w < 2; w++ {
			id := fmt.Sprintf("r%dw%d", round, w)
			killAfter := time.Duration(rng.Int63n(int64(60 * time.Millisecond)))
			workerSeed := strconv.FormatInt(rng.Int63(), 10)
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(exe)
				cmd.Env = append(nexusEnv(t, t.TempDir(), ""), workerEnv+"="+id, workerProjectEnv+"="+proj,
					workerSeedEnv+"="+workerSeed, workerMemEnv+"="+strings.Join(mems, "\n"))
				out, err := cmd.StdoutPipe()
				if err != nil {
					errs <- err.Error()
					return
				}
				p, err := startKilled(cmd, -1)
				if err != nil {
					errs <- err.Error()
					return
				}
				// The kill clock starts at the first write, not at process
				// start-up (a race-enabled test binary starts slowly).
				sc := bufio.NewScanner(out)
				var inflight *hookEvent
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					mu.Lock()
					switch {
					case f[0] == "B" && len(f) >= 3:
						if p.timer == nil {
							p.timer = time.AfterFunc(killAfter, func() { cmd.Process.Kill() })
						}
						ev := hookEvent{kind: f[1], agent: f[2]}
						if len(f) > 3 {
							ev.file = f[3]
						}
						led.sent(ev)
						inflight = &ev
					case f[0] == "A" && inflight != nil:
						led.acked(*inflight)
						inflight = nil
						acked++
					default:
						errs <- "worker said " + sc.Text()
					}
					mu.Unlock()
				}
				if k, err := p.wait(); !k {
					errs <- fmt.Sprintf("worker %s ended without being killed: %v\n%s", id, err, p.stderr.String())
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		killed += 2
		snap, probs := inspect(l, sch)
		probs = append(probs, led.check(snap)...)
		if len(probs) > 0 {
			t.Fatalf("after round %d (%d kills):\n%s", round, killed, strings.Join(probs, "\n"))
		}
		for _, r := range snap.Residue {
			residue[r] = true
		}
	}
	if killed < want/3 {
		t.Fatalf("only %d of %d kills before the deadline", killed, want)
	}
	t.Logf("%d kills in %d rounds of 2 workers, %d acknowledged writes; %d temporary files left", killed, round, acked, len(residue))
}
