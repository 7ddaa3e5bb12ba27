package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The limits of one child process (the rules).
const (
	maxWall = 5 * time.Second
	maxRSS  = 128 << 20
	// heldOpen is how long the runner waits, after the child ended, for
	// its output to close: a process it left behind that still holds
	// stdout or stderr makes the host wait as for a hung hook.
	heldOpen = time.Second
	// outputCap bounds what is kept of a child's stdout and stderr: a
	// child that prints /dev/zero must not exhaust the test instead.
	outputCap = 1 << 20
	// rssPoll is how often the watchdog reads a running child's resident
	// high-water mark, so that a child reading /dev/zero (1.8 GB/s) is
	// stopped near the limit instead of taking the machine's memory.
	rssPoll = 10 * time.Millisecond
)

// launcher is the built ./internal/hostile/launcher (see its doc: why
// children are not started directly).
var launcher string

// child is one process to run.
type child struct {
	bin   string
	args  []string
	dir   string
	env   []string
	stdin []byte
	// wall and rss override maxWall / maxRSS (the runner's own tests).
	wall time.Duration
	rss  int64
}

// outcome is how a child ended.
type outcome struct {
	stdout, stderr []byte
	code           int // exit status; -1 when it died of a signal
	signal         int // the signal it died of, when it was not the runner's kill
	took           time.Duration
	maxRSS         int64         // bytes: the child's ru_maxrss (wait4), else the highest VmHWM seen
	cpu            time.Duration // user + system time of the child (and what it waited for)
	killed         string        // why the runner killed it: "" (it ended by itself), "time" or "rss"
	heldOpen       bool          // a process outside its group kept its stdout or stderr open
	startErr       error
}

// run starts c through the launcher in a process group of its own,
// kills the whole group when it runs longer than the wall limit or its
// resident high-water mark passes the RSS limit, and reports its peak
// RSS from wait4's rusage (the launcher's report).
func run(c child) outcome {
	wall, limit := c.wall, c.rss
	if wall == 0 {
		wall = maxWall
	}
	if limit == 0 {
		limit = maxRSS
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return outcome{startErr: err, code: -1}
	}
	defer statusR.Close()
	cmd := exec.Command(launcher, append([]string{c.bin}, c.args...)...)
	cmd.Dir, cmd.Env = c.dir, c.env
	cmd.Stdin = bytes.NewReader(c.stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.ExtraFiles = []*os.File{statusW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = heldOpen
	start := time.Now()
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return outcome{startErr: err, code: -1}
	}
	group := cmd.Process.Pid
	killGroup := func() { syscall.Kill(-group, syscall.SIGKILL) }

	var (
		mu      sync.Mutex
		killed  string
		pid     int
		hwm     int64
		report  string
		reading = make(chan struct{})
	)
	go func() {
		defer close(reading)
		sc := bufio.NewScanner(statusR)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			if v, ok := strings.CutPrefix(line, "pid "); ok {
				pid, _ = strconv.Atoi(v)
			} else {
				report = line
			}
			mu.Unlock()
		}
	}()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(rssPoll)
		defer tick.Stop()
		deadline := time.NewTimer(wall)
		defer deadline.Stop()
		stop := func(why string) {
			mu.Lock()
			if killed == "" {
				killed = why
			}
			mu.Unlock()
			killGroup()
		}
		for {
			select {
			case <-done:
				return
			case <-deadline.C:
				stop("time")
				return
			case <-tick.C:
				mu.Lock()
				p := pid
				mu.Unlock()
				if p == 0 {
					continue
				}
				h := highWater(p)
				mu.Lock()
				hwm = max(hwm, h)
				mu.Unlock()
				if h > limit {
					stop("rss")
					return
				}
			}
		}
	}()
	waitErr := cmd.Wait()
	took := time.Since(start)
	close(done)
	// Whatever the child left in its group (a plugin process) goes too.
	killGroup()
	<-reading
	mu.Lock()
	defer mu.Unlock()
	o := outcome{stdout: stdout.Bytes(), stderr: stderr.Bytes(), took: took, killed: killed, maxRSS: hwm, code: -1,
		heldOpen: errors.Is(waitErr, exec.ErrWaitDelay)}
	var code, sig int
	var kib, usec int64
	switch {
	case strings.HasPrefix(report, "error "):
		o.startErr = fmt.Errorf("%s", strings.TrimPrefix(report, "error "))
	case report != "":
		if _, err := fmt.Sscanf(report, "exit %d %d %d %d", &code, &sig, &kib, &usec); err != nil {
			o.startErr = fmt.Errorf("launcher report %q: %v", report, err)
			break
		}
		o.maxRSS = kib << 10
		o.cpu = time.Duration(usec) * time.Microsecond
		o.code = code
		if sig != 0 {
			o.code, o.signal = -1, sig
		}
	case killed == "":
		o.startErr = fmt.Errorf("the launcher ended without a report: %v", waitErr)
	}
	return o
}

// highWater reads a process's resident high-water mark (VmHWM) from
// /proc/PID/status (0 when it is gone).
func highWater(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// capped keeps the first outputCap bytes written to it and counts the rest.
type capped struct {
	buf     bytes.Buffer
	dropped int64
}

func (w *capped) Write(p []byte) (int, error) {
	room := outputCap - w.buf.Len()
	if room >= len(p) {
		return w.buf.Write(p)
	}
	if room > 0 {
		w.buf.Write(p[:room])
	}
	w.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (w *capped) Bytes() []byte {
	if w.dropped > 0 {
		return append(w.buf.Bytes(), fmt.Sprintf("\n[%d more bytes dropped]", w.dropped)...)
	}
	return w.buf.Bytes()
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
