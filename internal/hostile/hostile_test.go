package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// concurrency bounds the tracks run at once: twice the cores. Passing
// steps are short and busy (and install and core extract fsync every
// file), so more at once only slows each step down against its 5 s
// limit; a failing run waits longer on FIFOs, which is its own problem.
func concurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// TestHostileClone runs every entry point of nexus against every
// repository of the table, each freshly cloned with git (see doc.go).
// Each row × track is a subtest (TestHostileClone/ROW/TRACK); a failure
// names the repository, the entry point and the rule it broke.
func TestHostileClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nexus and runs it against every hostile repository")
	}
	moduleRoot = testenv.ModuleRoot(t)
	rssrun = commands.Path(t, "./internal/testenv/rssrun")
	bin := commands.Path(t, "./cmd/nexus")
	commands.Path(t, "./cmd/nexus-plugins") // beside nexus: the decision store's host
	dir := t.TempDir()
	gitconfig, err := writeGitconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	base, err := baseProject(bin, dir, gitconfig)
	if err != nil {
		t.Fatal(err)
	}

	type job struct {
		r        repo
		track    string
		selected bool
		done     chan trackResult
	}
	var jobs []*job
	for _, r := range repos {
		names := r.tracks
		if names == nil {
			names = standardTracks
		}
		for _, tr := range names {
			j := &job{r: r, track: tr, done: make(chan trackResult, 1)}
			jobs = append(jobs, j)
			t.Run(r.name+"/"+tr, func(t *testing.T) {
				j.selected = true
				t.Parallel() // resumes once every job has been started below
				res := <-j.done
				t.Logf("%s: %s", r.name, r.why)
				for _, l := range res.log {
					t.Log(l)
				}
				if res.setup != nil {
					t.Fatalf("%s · %s: setting up the clone: %v", r.name, tr, res.setup)
				}
				for _, f := range res.failures {
					t.Error(f)
				}
			})
		}
	}
	// The selected jobs run on a pool of their own: the parallel
	// subtests above only wait for them and report, so -parallel (the
	// cores) does not bound how many children wait on a FIFO at once.
	sem := make(chan struct{}, concurrency())
	var mu sync.Mutex
	summary := map[string]trackResult{}
	start := time.Now()
	var wg sync.WaitGroup
	for i, j := range jobs {
		if !j.selected {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := runTrack(filepath.Join(dir, fmt.Sprintf("s%03d", i)), bin, gitconfig, base, j.r, j.track)
			mu.Lock()
			summary[j.r.name+"/"+j.track] = res
			mu.Unlock()
			j.done <- res
		}()
	}
	t.Cleanup(func() {
		wg.Wait()
		var b strings.Builder
		var cpu time.Duration
		wall := time.Since(start)
		for _, j := range jobs {
			res, ok := summary[j.r.name+"/"+j.track]
			if !ok {
				continue
			}
			verdict := "pass"
			if res.setup != nil || len(res.failures) > 0 {
				verdict = fmt.Sprintf("FAIL (%d)", len(res.failures))
			}
			cpu += res.cpu
			fmt.Fprintf(&b, "  %-24s %-12s %3d steps %8v wall %8v cpu  %s\n", j.r.name, j.track, res.steps, res.took.Round(time.Millisecond), res.cpu.Round(time.Millisecond), verdict)
		}
		t.Logf("hostile clone suite: %v wall, %v cpu in nexus processes, %d tracks at once\n%s", wall.Round(time.Millisecond), cpu.Round(time.Millisecond), concurrency(), b.String())
	})
}

// trackResult is what one row × track found.
type trackResult struct {
	setup    error
	steps    int
	took     time.Duration
	cpu      time.Duration // the children's, summed
	log      []string      // one line per step
	failures []string
}

// runTrack clones the row's repository into root and runs the track's
// steps in order, each checked against the rules.
func runTrack(root, bin, gitconfig, base string, r repo, track string) (res trackResult) {
	start := time.Now()
	defer func() { res.took = time.Since(start) }()
	defer killStrays(root)
	sc, err := newScenario(root, bin, gitconfig)
	if err == nil {
		err = sc.build(r, base)
	}
	var steps []step
	if err == nil {
		steps, err = tracks(track, sc)
	}
	if err != nil {
		res.setup = err
		return res
	}
	// src/, the origin of the clone, is compared once for the whole track
	// (nothing of a step reaches it but through git, which no entry point
	// here runs against the origin); the rest before and after each step.
	skip := func(rel string) bool { return unwatched[rel] || rel == "src" }
	srcBefore, err := take(sc.src, nil, nil)
	if err != nil {
		res.setup = fmt.Errorf("snapshot: %w", err)
		return res
	}
	before, err := takeWithDevices(sc.root, skip, nil)
	if err != nil {
		res.setup = fmt.Errorf("snapshot: %w", err)
		return res
	}
	defer func() {
		srcAfter, err := take(sc.src, nil, srcBefore)
		if err != nil {
			res.setup = fmt.Errorf("snapshot of src: %w", err)
			return
		}
		var changed []string
		for _, c := range diff(srcBefore, srcAfter) {
			changed = append(changed, "src/"+c.String())
		}
		if len(changed) > 0 {
			res.failures = append(res.failures, fmt.Sprintf("%s · %s: outside change during the track, in the repository it was cloned from: %s", r.name, track, strings.Join(capList(changed, 12), "; ")))
		}
	}()
	for _, st := range steps {
		env := append(append([]string(nil), sc.env...), st.env...)
		o := run(bin, st.args, sc.clone, env, st.stdin)
		after, err := takeWithDevices(sc.root, skip, before)
		if err != nil {
			res.setup = fmt.Errorf("snapshot after %s: %w", st.name, err)
			return res
		}
		changes := diff(before, after)
		before = after
		fails := judge(sc, st, o, changes)
		res.steps++
		res.cpu += o.CPU
		line := fmt.Sprintf("%-70s %7v wall %7v cpu %6.1f MiB exit %d", st.name, o.Took.Round(time.Millisecond), o.CPU.Round(time.Millisecond), float64(o.MaxRSS)/(1<<20), o.Code)
		if o.Killed != "" {
			line += " (killed: " + o.Killed + ")"
		}
		if len(fails) > 0 {
			line += "  FAIL"
		}
		res.log = append(res.log, line)
		for _, f := range fails {
			res.failures = append(res.failures, fmt.Sprintf("%s · %s · %s: %s", r.name, track, st.name, f))
		}
	}
	return res
}

// devices are the device files the repositories link to. The tests run
// as whatever user runs them, root included, so a remove or rename that
// followed a link could take one away: each is compared by identity
// (inode, type, device number), not by times, which reads and writes of
// a device may change.
var devices = []string{"/dev/zero", "/dev/null"}

// takeWithDevices is take, plus an entry "dev:/dev/zero" for each device.
func takeWithDevices(root string, skip func(string) bool, prev snapshot) (snapshot, error) {
	s, err := take(root, skip, prev)
	if err != nil {
		return nil, err
	}
	for _, d := range devices {
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			continue // gone: the diff with the snapshot before shows it
		}
		s["dev:"+d] = entry{mode: modeOf(&st), ino: st.Ino, rdev: st.Rdev}
	}
	return s, nil
}

// judge applies the rules to one finished step. Each finding starts
// with the rule's name.
func judge(sc *scenario, st step, o testenv.BoundedOutcome, changes []change) []string {
	var out []string
	tail := func() string { return clip(string(o.Stderr), 300) }
	if o.Err != nil {
		out = append(out, fmt.Sprintf("could not run: %v", o.Err))
	}
	switch {
	case o.Killed == "time":
		out = append(out, fmt.Sprintf("time: still running after %v, killed (limit %v); stderr %q", maxWall, maxWall, tail()))
	case o.Took > maxWall:
		out = append(out, fmt.Sprintf("time: took %v (limit %v, %v of CPU); stderr %q", o.Took.Round(time.Millisecond), maxWall, o.CPU.Round(time.Millisecond), tail()))
	}
	if o.HeldOpen {
		out = append(out, fmt.Sprintf("time: a process the step left behind kept its output open after it ended (the host waits for it as for a hung hook); stderr %q", tail()))
	}
	if o.Killed == "rss" || o.MaxRSS > maxRSS {
		out = append(out, fmt.Sprintf("rss: peak resident memory %.0f MiB (limit %d MiB)%s; stderr %q", float64(o.MaxRSS)/(1<<20), maxRSS>>20, map[bool]string{true: ", killed", false: ""}[o.Killed == "rss"], tail()))
	}
	if o.Killed == "" && o.Signal != 0 {
		out = append(out, fmt.Sprintf("crash: died of %v; stderr %q", syscall.Signal(o.Signal), tail()))
	}
	for _, sign := range []string{"panic:", "fatal error:", "goroutine "} {
		if bytes.Contains(o.Stderr, []byte(sign)) {
			out = append(out, fmt.Sprintf("crash: %q on stderr: %q", sign, tail()))
			break
		}
	}
	var outside []string
	var allowed []change
	for _, c := range changes {
		if may(st, c.path) {
			allowed = append(allowed, c)
		}
	}
	parents := map[string]bool{}
	for _, c := range allowed {
		parents[path.Dir(c.path)] = true
	}
	for _, c := range changes {
		if may(st, c.path) {
			continue
		}
		// A folder whose entries changed gets a new mtime; when the
		// entry that changed is allowed, so is that.
		if c.before != nil && c.now != nil && c.before.mode.IsDir() && c.now.mode.IsDir() && parents[c.path] {
			continue
		}
		outside = append(outside, c.String())
	}
	if len(outside) > 0 {
		out = append(out, "outside change: "+strings.Join(capList(outside, 12), "; "))
	}
	if leak := canaryLeak(sc, o, changes); leak != "" {
		out = append(out, "outside read: "+leak)
	}
	if st.deny != "" && !denied(st.deny, o.Stdout) {
		how := "answered " + clip(strings.TrimSpace(string(o.Stdout)), 200)
		if len(bytes.TrimSpace(o.Stdout)) == 0 {
			how = "answered nothing (the host proceeds)"
		}
		if o.Killed != "" {
			how = "was killed (" + o.Killed + ") before answering"
		}
		out = append(out, fmt.Sprintf("allowed write: the gate must deny this call but %s; stderr %q", how, tail()))
	}
	return out
}

// may reports whether step st may change p (relative to the scenario
// root).
func may(st step, p string) bool {
	for _, pat := range neverMay {
		if match(pat, p) {
			return false
		}
	}
	for _, pat := range append(st.may, cacheMay...) {
		if match(pat, p) {
			return true
		}
	}
	return false
}

// match: "dir/**" is dir's content; anything else is a path.Match pattern.
func match(pat, p string) bool {
	if prefix, ok := strings.CutSuffix(pat, "/**"); ok {
		return strings.HasPrefix(p, prefix+"/")
	}
	ok, _ := path.Match(pat, p)
	return ok
}

// denied reports whether a hook's reply denies the call.
func denied(protocol string, stdout []byte) bool {
	var r struct {
		Decision string `json:"decision"`
		Out      struct {
			Decision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(stdout, &r) != nil {
		return false
	}
	if protocol == "neutral" {
		return r.Decision == "deny"
	}
	return r.Out.Decision == "deny"
}

// canaryLeak looks for the content of outside/ in what the step printed
// and in every file it wrote in the project or home.
func canaryLeak(sc *scenario, o testenv.BoundedOutcome, changes []change) string {
	if bytes.Contains(o.Stdout, []byte(canary)) {
		return "content from outside/ on stdout"
	}
	if bytes.Contains(o.Stderr, []byte(canary)) {
		return "content from outside/ on stderr"
	}
	for _, c := range changes {
		if c.now == nil || !c.now.mode.IsRegular() || c.now.size > hashLimit {
			continue
		}
		if !strings.HasPrefix(c.path, "clone/") && !strings.HasPrefix(c.path, "home/") {
			continue
		}
		f, err := os.OpenFile(filepath.Join(sc.root, filepath.FromSlash(c.path)), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, hashLimit))
		f.Close()
		if bytes.Contains(b, []byte(canary)) {
			return "content from outside/ copied into " + c.path
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

func capList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(l[:n:n], fmt.Sprintf("and %d more", len(l)-n))
}
