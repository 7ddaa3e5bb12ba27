package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
)

// Environment of a helper process (this test binary, started again).
const (
	envHelper  = "NEXUS_MEMORY_TEST_HELPER"
	envProject = "NEXUS_MEMORY_TEST_PROJECT"
	envWorker  = "NEXUS_MEMORY_TEST_WORKER"
	envCount   = "NEXUS_MEMORY_TEST_COUNT"
	envCheck   = "NEXUS_MEMORY_TEST_CHECK"
)

const sharedFiles = 50

func sharedFile(i int) string { return fmt.Sprintf("empirical-shared-file-%02d.md", i) }

// TestHelperProcess is not a test: the concurrency tests start the test
// binary again with envHelper set, and then this observes memory reads the
// way one hook process after another would.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		return
	}
	worker, _ := strconv.Atoi(os.Getenv(envWorker))
	n, _ := strconv.Atoi(os.Getenv(envCount))
	check := os.Getenv(envCheck) == "1"
	p := newProjectAt(t, os.Getenv(envProject), Options{}, time.Time{})
	ctx := context.Background()
	agent := fmt.Sprintf("worker-%d", worker)
	// Lines already checked against the schema (by content): one line
	// changes per write, so each check validates what is new.
	valid := map[string]bool{}
	for i := 0; i < n; i++ {
		// i*7 mod 50 runs over all 50 files in every block of 50 reads, so
		// each worker reads each file exactly n/50 times.
		f := p.mem(sharedFile((i*7 + worker) % sharedFiles))
		if err := p.m.Observe(ctx, f, agent, time.Time{}); err != nil {
			t.Fatalf("worker %d, read %d: %v", worker, i, err)
		}
		if check {
			if err := logProblem(p.m.store.L.MemoryAccessPath(), valid); err != nil {
				t.Fatalf("worker %d, after read %d: %v", worker, i, err)
			}
		}
	}
	os.Exit(0)
}

func helperCmd(t *testing.T, dir string, worker, count int, check bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	c := "0"
	if check {
		c = "1"
	}
	cmd.Env = append(os.Environ(), envHelper+"=1", envProject+"="+dir,
		envWorker+"="+strconv.Itoa(worker), envCount+"="+strconv.Itoa(count), envCheck+"="+c)
	return cmd
}

func sharedProject(t *testing.T) *project {
	t.Helper()
	p := newProject(t, Options{}, time.Time{})
	for i := 0; i < sharedFiles; i++ {
		p.write(sharedFile(i), "# shared\n")
	}
	return p
}

// 8 processes × 500 observations of 50 files at once: no update is lost
// and the log is valid after every write (each worker checks after each
// of its writes; this process checks whatever it finds meanwhile).
func TestObserveAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	const workers, perWorker = 8, 500
	p := sharedProject(t)
	logPath := p.m.store.L.MemoryAccessPath()

	stop := make(chan struct{})
	var snapshots atomic.Int64
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		valid := map[string]bool{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := os.Stat(logPath); err == nil {
				if err := logProblem(logPath, valid); err != nil {
					t.Errorf("while the workers ran: %v", err)
					return
				}
				snapshots.Add(1)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	cmds := make([]*exec.Cmd, workers)
	outs := make([][]byte, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for k := 0; k < workers; k++ {
		cmds[k] = helperCmd(t, p.dir, k, perWorker, true)
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			outs[k], _ = cmds[k].CombinedOutput()
		}(k)
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	for k, c := range cmds {
		if !c.ProcessState.Success() {
			t.Fatalf("worker %d failed:\n%s", k, outs[k])
		}
	}
	t.Logf("%d observations in %v; %d snapshots checked while they ran", workers*perWorker, time.Since(start), snapshots.Load())

	recs := p.records()
	if len(recs) != sharedFiles {
		t.Fatalf("%d records, want %d", len(recs), sharedFiles)
	}
	var total int64
	for i := 0; i < sharedFiles; i++ {
		r := recs[p.mem(sharedFile(i))]
		if r.AccessCount != workers*perWorker/sharedFiles {
			t.Errorf("%s: count %d, want %d", sharedFile(i), r.AccessCount, workers*perWorker/sharedFiles)
		}
		total += r.AccessCount
	}
	if total != workers*perWorker {
		t.Fatalf("total %d, want %d", total, workers*perWorker)
	}
	assertLogValid(t, logPath)
}

// A process killed with SIGKILL in the middle of its loop never leaves an
// unparsable log or a stale lock.
func TestObserveSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	p := sharedProject(t)
	logPath := p.m.store.L.MemoryAccessPath()
	total := func() int64 {
		recs, err := state.ReadMemoryAccess(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, r := range recs {
			n += r.AccessCount
		}
		return n
	}
	rng := rand.New(rand.NewSource(1))
	var last int64
	for round := 0; round < 8; round++ {
		cmd := helperCmd(t, p.dir, round, 1<<30, false)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it get going, then kill it at a random moment.
		deadline := time.Now().Add(20 * time.Second)
		for total() < last+10 {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the helper made no progress")
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.Intn(3000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		assertLogValid(t, logPath)
		n := total()
		if n < last {
			t.Fatalf("round %d: the total went down from %d to %d", round, last, n)
		}
		last = n
	}
	t.Logf("%d reads recorded over 8 kills", last)
	// The kernel dropped the dead holders' locks: this write goes through.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.m.Observe(ctx, p.mem(sharedFile(0)), "after", time.Time{}); err != nil {
		t.Fatalf("observe after the kills: %v", err)
	}
	if total() != last+1 {
		t.Fatalf("total %d after one more read, want %d", total(), last+1)
	}
}

// logProblem checks every line of the log against the schema, skipping
// line contents already found valid (valid is updated); it returns what is
// wrong, or nil.
func logProblem(path string, valid map[string]bool) error {
	b, _, err := state.ReadStable(path)
	if err != nil {
		return err
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return fmt.Errorf("%s is empty or does not end with a newline", path)
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if valid[line] {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return fmt.Errorf("line %d of %s is not JSON: %q", i+1, path, line)
		}
		if ps, err := schemas.Validate(schema.StateMemory, v); err != nil || len(ps) > 0 {
			return fmt.Errorf("line %d of %s is invalid: %v %v", i+1, path, ps, err)
		}
		valid[line] = true
	}
	return nil
}

// The checks the concurrency tests rely on do fail on broken logs.
func TestLogProblemDetects(t *testing.T) {
	loadCore(t)
	dir := t.TempDir()
	for _, bad := range []string{
		"",
		`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":1,"last_agent":"x"}`,
		`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":1,"last_ag` + "\n",
		`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":-1,"last_agent":"x"}` + "\n",
	} {
		path := filepath.Join(dir, "log.jsonl")
		writeFile(t, path, bad)
		if logProblem(path, map[string]bool{}) == nil {
			t.Errorf("logProblem accepted %q", bad)
		}
	}
}
