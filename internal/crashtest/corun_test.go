package crashtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// otherHarness is the second harness id sharing the project's .nexus/.
const otherHarness = "other-nexus"

// runJail is the test binary as a jail: in the mount namespace it was
// started in (jailCmd), it bind-mounts the trap directory over the target
// directory and execs its arguments. The program then sees the trap where
// the other harness's namespace is: whatever it does there lands in the
// trap, which only jailed processes can reach, so an inotify watch on the
// trap sees exactly their accesses.
func runJail() {
	trap, target := os.Getenv(jailTrapEnv), os.Getenv(jailTargetEnv)
	if err := syscall.Mount(trap, target, "", syscall.MS_BIND, ""); err != nil {
		fmt.Fprintf(os.Stderr, "jail: bind %s over %s: %v\n", trap, target, err)
		os.Exit(97)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, jailTrapEnv+"=") && !strings.HasPrefix(e, jailTargetEnv+"=") {
			env = append(env, e)
		}
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintf(os.Stderr, "jail: exec %s: %v\n", os.Args[1], err)
	os.Exit(97)
}

// jailCmd returns a command running bin args with trap bind-mounted over
// target in a new mount namespace (as root, or in a new user namespace
// mapping this user to root in it).
func jailCmd(t *testing.T, trap, target, bin string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{bin}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
	} else {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	cmd.Env = []string{jailTrapEnv + "=" + trap, jailTargetEnv + "=" + target}
	return cmd
}

// watch records every inotify event on a directory.
type watch struct{ fd int }

func newWatch(dir string) (*watch, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_ALL_EVENTS); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &watch{fd}, nil
}

// events drains and describes what happened since the watch started.
func (w *watch) events() []string {
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		for off := 0; off+16 <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+16:off+16+nameLen], "\x00"))
			out = append(out, fmt.Sprintf("%s mask %#x", name, mask))
			off += 16 + nameLen
		}
	}
}

func (w *watch) close() { syscall.Close(w.fd) }

// listTree returns every path under dir, relative, with a trailing slash
// for directories.
func listTree(dir string) map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out[filepath.ToSlash(rel)] = true
		return nil
	})
	return out
}

// harnessRun is one harness's side of the co-running test.
type harnessRun struct {
	id     string
	layout state.Layout
	// command builds a nexus command for this harness (jailed when the
	// platform allows it).
	command func(args ...string) *exec.Cmd
	mu      sync.Mutex
	ledger  *hookLedger
	titles  []string // acknowledged task_add titles
	topics  []string // acknowledged plan_start topics
	errs    []string
}

func (h *harnessRun) fail(format string, a ...any) {
	h.mu.Lock()
	h.errs = append(h.errs, fmt.Sprintf(h.id+": "+format, a...))
	h.mu.Unlock()
}

// TestCoRunning runs two harnesses, nexus and other-nexus, against one
// .nexus/ at the same time: each drives `nexus mcp` (task_add, plan_start;
// nexus also closes cycles) and three subagents' worth of `nexus hook`
// processes (start, writes, memory reads, stop). Afterwards:
//   - plan.json, tasks.json and history.json are valid and hold every
//     acknowledged task and plan of both harnesses exactly once;
//   - each namespace holds exactly its own harness's tracker entries,
//     tool-log lines and memory-access counts, and nothing new appears in
//     state/ outside the two namespaces but the shared files;
//   - no process of one harness touched the other's namespace: each
//     harness's processes run in a mount namespace where the other's
//     namespace directory is covered by a trap directory watched with
//     inotify, and the traps saw no event (skipped where mount namespaces
//     are unavailable).
func TestCoRunning(t *testing.T) {
	t.Parallel()
	bin := nexusBinary(t)
	sch := schema.NewCoreSet(testenv.CoreDir(t))
	home, proj, traps := t.TempDir(), t.TempDir(), t.TempDir()
	runs := []*harnessRun{{id: harnessid.Default}, {id: otherHarness}}
	var mems []string
	for i := 0; i < 3; i++ {
		f := filepath.Join(proj, ".nexus", "memory", fmt.Sprintf("external-shared-%d.md", i))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("# shared\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mems = append(mems, f)
	}
	for _, h := range runs {
		var err error
		if h.layout, err = state.NewLayout(proj, h.id); err != nil {
			t.Fatal(err)
		}
		// The bind-mount targets must exist before either harness starts.
		if err := os.MkdirAll(h.layout.HarnessDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		h.ledger = newHookLedger(proj)
	}

	// Jail each harness away from the other's namespace, if this machine
	// lets a test create mount namespaces: a control run must show the
	// trap catching a harness that writes into it.
	jailed, why := true, ""
	control := filepath.Join(traps, "control")
	if err := os.Mkdir(control, 0o755); err != nil {
		t.Fatal(err)
	}
	if w, err := newWatch(control); err != nil {
		jailed, why = false, "inotify: "+err.Error()
	} else {
		cmd := jailCmd(t, control, runs[1].layout.HarnessDir(), bin, "--project", proj, "hook", "--host", "claude")
		cmd.Env = append(cmd.Env, nexusEnv(t, home, otherHarness)...)
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","source":"startup"}`)
		out, err := cmd.CombinedOutput()
		switch {
		case err != nil:
			jailed, why = false, fmt.Sprintf("jailed control run: %v: %s", err, out)
		case len(w.events()) == 0 || !state.Exists(filepath.Join(control, "agent-tracker.json")):
			t.Fatalf("the trap did not catch a harness writing its own namespace through it: %s", out)
		}
		w.close()
	}
	var watches []*watch
	for i, h := range runs {
		other := runs[1-i]
		trap := filepath.Join(traps, "covers-"+other.id)
		if err := os.Mkdir(trap, 0o755); err != nil {
			t.Fatal(err)
		}
		env := nexusEnv(t, home, h.id)
		if !jailed {
			h.command = func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append([]string{"--project", proj}, args...)...)
				cmd.Dir, cmd.Env = proj, env
				return cmd
			}
			continue
		}
		w, err := newWatch(trap)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		watches = append(watches, w)
		target := other.layout.HarnessDir()
		h.command = func(args ...string) *exec.Cmd {
			cmd := jailCmd(t, trap, target, bin, append([]string{"--project", proj}, args...)...)
			cmd.Dir = proj
			cmd.Env = append(cmd.Env, env...)
			return cmd
		}
	}
	before := listTree(filepath.Join(proj, ".nexus"))

	hook := func(h *harnessRun, ev hookEvent) {
		cmd := h.command("hook", "--host", "claude")
		cmd.Stdin = bytes.NewReader(ev.payload)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if ev.kind != "session" {
			h.mu.Lock()
			h.ledger.sent(ev)
			h.mu.Unlock()
		}
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			h.fail("%s of %s: %v %s", ev.kind, ev.agent, err, stderr.String())
			return
		}
		if ev.kind != "session" {
			h.mu.Lock()
			h.ledger.acked(ev)
			h.mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for i, h := range runs {
		hook(h, hookEvent{kind: "session", payload: []byte(`{"hook_event_name":"SessionStart","source":"startup","cwd":"` + proj + `"}`)})
		// The tools over MCP.
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := startMCP(h.command("mcp"), -1)
			if err != nil {
				h.fail("start mcp: %v", err)
				return
			}
			defer func() {
				if k, err := c.close(); k || err != nil {
					h.fail("nexus mcp: %v\n%s", err, c.p.stderr.String())
				}
			}()
			if err := c.initialize(); err != nil {
				h.fail("initialize: %v\n%s", err, c.p.stderr.String())
				return
			}
			for n := 1; n <= 40; n++ {
				switch {
				case n%7 == 0:
					topic := fmt.Sprintf("%s topic %d", h.id, n)
					if _, err := c.call("nx_plan_start", map[string]any{"topic": topic, "issues": []string{"one"}, "research_summary": "r"}); err != nil {
						h.fail("%v", err)
						return
					}
					h.topics = append(h.topics, topic)
				case i == 0 && n%15 == 0:
					if _, err := c.call("nx_task_close", map[string]any{}); err != nil {
						h.fail("%v", err)
						return
					}
				default:
					title := fmt.Sprintf("%s task %d", h.id, n)
					if _, err := c.call("nx_task_add", map[string]any{"title": title, "context": "c"}); err != nil {
						h.fail("%v", err)
						return
					}
					h.titles = append(h.titles, title)
				}
			}
		}()
		// Three subagents at a time, each event its own process.
		for lane := 0; lane < 3; lane++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for a := 0; a < 2; a++ {
					agent := fmt.Sprintf("%s-l%d-a%d", h.id, lane, a)
					hook(h, h.ledger.event("start", agent, ""))
					for c := 0; c < 4; c++ {
						if c%2 == 0 {
							hook(h, h.ledger.event("write", agent, filepath.Join(proj, "src", agent, fmt.Sprintf("f%d.go", c))))
						} else {
							hook(h, h.ledger.event("read", agent, mems[(lane+c)%len(mems)]))
						}
					}
					hook(h, h.ledger.event("stop", agent, ""))
				}
			}()
		}
	}
	wg.Wait()
	for _, h := range runs {
		for _, e := range h.errs {
			t.Error(e)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Shared files: valid, and everything acknowledged exactly once.
	var snaps []*snapshot
	for _, h := range runs {
		snap, probs := inspect(h.layout, sch)
		probs = append(probs, h.ledger.check(snap)...)
		for _, e := range snap.Tracker {
			if e.HarnessID != h.id {
				probs = append(probs, fmt.Sprintf("tracker entry %s has harness_id %q", e.AgentID, e.HarnessID))
			}
		}
		if len(snap.Residue) > 0 {
			probs = append(probs, fmt.Sprintf("temporary files left without any crash: %v", snap.Residue))
		}
		for _, p := range probs {
			t.Errorf("%s namespace: %s", h.id, p)
		}
		snaps = append(snaps, snap)
	}
	titles, topics := map[string]int{}, map[string]int{}
	s := snaps[0]
	if s.Tasks != nil {
		ids := map[int64]bool{}
		for _, x := range s.Tasks.Tasks {
			titles[x.Title]++
			if ids[x.ID] {
				t.Errorf("tasks.json has two tasks with id %d", x.ID)
			}
			ids[x.ID] = true
		}
	}
	if s.Plan != nil {
		topics[s.Plan.Topic]++
	}
	for _, c := range s.History {
		for _, x := range c.Tasks {
			titles[x.Title]++
		}
		if c.Plan != nil {
			topics[c.Plan.Topic]++
		}
	}
	for _, h := range runs {
		for _, title := range h.titles {
			if titles[title] != 1 {
				t.Errorf("acknowledged task %q appears %d times in tasks.json and history.json", title, titles[title])
			}
			delete(titles, title)
		}
		for _, topic := range h.topics {
			if topics[topic] != 1 {
				t.Errorf("acknowledged plan %q appears %d times in plan.json and history.json", topic, topics[topic])
			}
			delete(topics, topic)
		}
	}
	for title := range titles {
		t.Errorf("task %q was never acknowledged", title)
	}
	for topic := range topics {
		t.Errorf("plan %q was never acknowledged", topic)
	}

	// Only the shared files and the two namespaces are new in .nexus/.
	shared := map[string]bool{"history.json": true, ".gitignore": true, "state/plan.json": true, "state/tasks.json": true,
		"state/plan.json.lock": true, "state/tasks.json.lock": true, "state/history.json.lock": true}
	var stray []string
	for p := range listTree(filepath.Join(proj, ".nexus")) {
		if before[p] || shared[p] || strings.HasPrefix(p, "state/nexus/") || strings.HasPrefix(p, "state/"+otherHarness+"/") {
			continue
		}
		stray = append(stray, p)
	}
	sort.Strings(stray)
	if len(stray) > 0 {
		t.Errorf("new files outside the two namespaces and the shared files: %v", stray)
	}
	t.Logf("%s: %d tasks, %d plans, %d agents; %s: %d tasks, %d plans, %d agents; %d history cycles",
		runs[0].id, len(runs[0].titles), len(runs[0].topics), len(runs[0].ledger.agents),
		runs[1].id, len(runs[1].titles), len(runs[1].topics), len(runs[1].ledger.agents), len(s.History))

	t.Run("no process opened the other namespace", func(t *testing.T) {
		if !jailed {
			t.Skip("mount namespaces unavailable here (" + why + "); the namespace contents were checked above")
		}
		for i, w := range watches {
			if ev := w.events(); len(ev) > 0 {
				t.Errorf("processes of %s touched %s's namespace: %d inotify events, the first: %v", runs[i].id, runs[1-i].id, len(ev), ev[:min(len(ev), 10)])
			}
		}
		for _, h := range runs {
			ents, err := os.ReadDir(filepath.Join(traps, "covers-"+h.id))
			if err != nil || len(ents) > 0 {
				t.Errorf("the trap over %s's namespace holds %d entries (%v)", h.id, len(ents), err)
			}
		}
	})
}
