package testenv

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

// Bounded is a program to run bounded in time and memory (RunBounded).
type Bounded struct {
	// RSSRun is the built ./internal/testenv/rssrun (Commands.Path), which
	// starts the program and measures it.
	RSSRun string
	Bin    string
	Args   []string
	Dir    string
	Env    []string
	Stdin  []byte
	// Wall kills the process group after this long; RSS kills it as soon
	// as the program's resident high-water mark passes this many bytes.
	// Zero means no limit.
	Wall time.Duration
	RSS  int64
}

// BoundedOutcome is how a bounded program ended.
type BoundedOutcome struct {
	Stdout, Stderr []byte // the first MiB of each
	Code           int    // exit status; -1 when it died of a signal or was killed
	Signal         int    // the signal it died of, when RunBounded did not kill it
	Took           time.Duration
	// MaxRSS is the program's peak resident set in bytes: ru_maxrss from
	// wait4, or, when it was killed, the highest VmHWM seen.
	MaxRSS int64
	CPU    time.Duration // user + system time (of what it waited for too)
	// Killed says why RunBounded killed it: "" (it ended by itself),
	// "time" or "rss".
	Killed string
	// HeldOpen: a process outside its group (a daemon it started) kept
	// its stdout or stderr open for heldOpen after it ended.
	HeldOpen bool
	Err      error // it could not be started or measured
}

const (
	// boundedOutput bounds what is kept of each output: a program that
	// prints /dev/zero must not exhaust the test instead.
	boundedOutput = 1 << 20
	// rssPoll is how often a running program's VmHWM is read, so that one
	// reading /dev/zero (1.8 GB/s) is stopped near its limit.
	rssPoll = 10 * time.Millisecond
	// heldOpen is how long RunBounded waits, after the program ended, for
	// its output to close.
	heldOpen = time.Second
)

// RunBounded runs b.Bin through rssrun in a process group of its own,
// kills the group when the program runs longer than b.Wall or its
// resident high-water mark passes b.RSS, and reports its peak RSS from
// its own rusage (getrusage of the child, see rssrun for why not
// directly).
func RunBounded(b Bounded) BoundedOutcome {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return BoundedOutcome{Err: err, Code: -1}
	}
	defer statusR.Close()
	cmd := exec.Command(b.RSSRun, append([]string{b.Bin}, b.Args...)...)
	cmd.Dir, cmd.Env = b.Dir, b.Env
	cmd.Stdin = bytes.NewReader(b.Stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.ExtraFiles = []*os.File{statusW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = heldOpen
	start := time.Now()
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return BoundedOutcome{Err: err, Code: -1}
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
			mu.Lock()
			if v, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
				pid, _ = strconv.Atoi(v)
			} else {
				report = sc.Text()
			}
			mu.Unlock()
		}
	}()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(rssPoll)
		defer tick.Stop()
		var deadline <-chan time.Time
		if b.Wall > 0 {
			t := time.NewTimer(b.Wall)
			defer t.Stop()
			deadline = t.C
		}
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
			case <-deadline:
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
				if b.RSS > 0 && h > b.RSS {
					stop("rss")
					return
				}
			}
		}
	}()
	waitErr := cmd.Wait()
	took := time.Since(start)
	close(done)
	// Whatever the program left in its group (a plugin process) goes too.
	killGroup()
	<-reading
	mu.Lock()
	defer mu.Unlock()
	o := BoundedOutcome{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Took: took, Killed: killed, MaxRSS: hwm, Code: -1,
		HeldOpen: errors.Is(waitErr, exec.ErrWaitDelay)}
	var code, sig int
	var kib, usec int64
	switch {
	case strings.HasPrefix(report, "error "):
		o.Err = errors.New(strings.TrimPrefix(report, "error "))
	case report != "":
		if _, err := fmt.Sscanf(report, "exit %d %d %d %d", &code, &sig, &kib, &usec); err != nil {
			o.Err = fmt.Errorf("rssrun report %q: %v", report, err)
			break
		}
		o.MaxRSS = kib << 10
		o.CPU = time.Duration(usec) * time.Microsecond
		o.Code = code
		if sig != 0 {
			o.Code, o.Signal = -1, sig
		}
	case killed == "":
		o.Err = fmt.Errorf("rssrun ended without a report: %v", waitErr)
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

// capped keeps the first boundedOutput bytes written to it and counts
// the rest.
type capped struct {
	buf     bytes.Buffer
	dropped int64
}

func (w *capped) Write(p []byte) (int, error) {
	room := boundedOutput - w.buf.Len()
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
