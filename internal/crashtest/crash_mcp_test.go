package crashtest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// TestCrashMCP SIGKILLs `nexus mcp` at random moments while a client
// drives plan_start, task_add, task_update and task_close through it, one
// call at a time. After every kill:
//   - plan.json, tasks.json and history.json parse and match their schemas;
//   - every acknowledged call (its answer was read) is on disk;
//   - the call in flight left each file either untouched or committed, in
//     the store's commit order (history first, then plan, then tasks): the
//     disk equals the state before the call or one of its commit steps.
//
// The disk state then becomes the model for the next server, so recovery
// from whatever the kill left behind is exercised too. Kills: 100 (20 with
// -short); every 25 kills start a fresh project so history stays small.
func TestCrashMCP(t *testing.T) {
	t.Parallel()
	bin := nexusBinary(t)
	rng := seed(t)
	sch := schema.NewCoreSet(testenv.CoreDir(t))
	home := t.TempDir()
	env := nexusEnv(t, home, "")
	want := kills(100)
	stop := deadline(3 * time.Minute)

	var proj string
	var l state.Layout
	var m *cycleModel
	seq, acked, killed := 0, 0, 0
	residue := map[string]bool{}
	var inflightSeen [4]int // kills landing with 0..3 commit steps done
	for killed < want && time.Now().Before(stop) {
		if killed%25 == 0 {
			proj = t.TempDir()
			var err error
			if l, err = state.NewLayout(proj, ""); err != nil {
				t.Fatal(err)
			}
			m = &cycleModel{}
		}
		cmd := exec.Command(bin, "--project", proj, "mcp")
		cmd.Dir, cmd.Env = proj, env
		// Most kills land mid-call: the server answers its first call
		// within ~15 ms and each write takes a few milliseconds.
		c, err := startMCP(cmd, time.Duration(rng.Int63n(int64(200*time.Millisecond))))
		if err != nil {
			t.Fatal(err)
		}
		var inflight *op
		if err := c.initialize(); err == nil {
			for {
				seq++
				o := m.next(rng, seq)
				inflight = o
				res, err := c.call(o.tool, o.args)
				if err == errGone {
					break
				}
				if err != nil {
					t.Fatalf("call %d: %v\nstderr: %s", seq, err, c.p.stderr.String())
				}
				checkAnswer(t, o, res)
				m, inflight = o.after, nil
				acked++
				// The server is idle until the next request: the disk
				// must hold exactly what was acknowledged.
				if snap, probs := inspect(l, sch); len(probs) > 0 || modelOf(snap).fps() != m.fps() {
					t.Fatalf("after acknowledged call %s:\n%s\ndisk:\n%s\nwant:\n%s", describe(o), strings.Join(probs, "\n"), showFPs(modelOf(snap).fps()), showFPs(m.fps()))
				}
			}
		} else if err != errGone {
			t.Fatal(err)
		}
		if k, err := c.p.wait(); !k {
			t.Fatalf("nexus mcp ended without being killed: %v\nstderr: %s", err, c.p.stderr.String())
		}
		killed++

		snap, probs := inspect(l, sch)
		if len(probs) > 0 {
			t.Fatalf("after kill %d (call in flight: %s):\n%s", killed, describe(inflight), strings.Join(probs, "\n"))
		}
		for _, r := range snap.Residue {
			residue[r] = true
		}
		got := modelOf(snap).fps()
		allowed := []fps{m.fps()}
		if inflight != nil {
			allowed = append(allowed, inflight.steps...)
		}
		step := -1
		for i, a := range allowed {
			if a == got {
				step = i
				break
			}
		}
		if step < 0 {
			t.Fatalf("after kill %d the disk matches neither the acknowledged state nor a commit step of the call in flight (%s)\n"+
				"disk:\n%s\nacknowledged:\n%s\nsteps of the call in flight:\n%s",
				killed, describe(inflight), showFPs(got), showFPs(m.fps()), showSteps(allowed[1:]))
		}
		if inflight != nil {
			inflightSeen[min(step, 3)]++
		}
		m = modelOf(snap)
	}
	if killed < want/3 {
		t.Fatalf("only %d of %d kills before the deadline", killed, want)
	}
	t.Logf("%d kills, %d acknowledged calls; kills mid-call by commit steps done (0,1,2,3): %v; %d temporary files left by killed writers",
		killed, acked, inflightSeen, len(residue))
}

// checkAnswer compares what a call answered with the model.
func checkAnswer(t *testing.T, o *op, res map[string]any) {
	t.Helper()
	switch o.tool {
	case "nx_task_add":
		task, _ := res["task"].(map[string]any)
		last := o.after.tasks.tasks[len(o.after.tasks.tasks)-1]
		if id, _ := task["id"].(float64); int64(id) != last.id || task["title"] != last.title {
			t.Fatalf("task_add answered %v, want id %d title %q", res, last.id, last.title)
		}
	case "nx_plan_start":
		if id, _ := res["plan_id"].(float64); int64(id) != o.after.plan.id {
			t.Fatalf("plan_start answered %v, want plan id %d", res, o.after.plan.id)
		}
	}
}

func describe(o *op) string {
	if o == nil {
		return "none"
	}
	return fmt.Sprintf("%s %v", o.tool, o.args)
}

func showFPs(f fps) string {
	return fmt.Sprintf("  history: %s\n  plan:    %s\n  tasks:   %s", strings.ReplaceAll(f[0], "\n", "\n           "), f[1], f[2])
}

func showSteps(s []fps) string {
	var b strings.Builder
	for i, f := range s {
		fmt.Fprintf(&b, " step %d:\n%s\n", i+1, showFPs(f))
	}
	return b.String()
}
