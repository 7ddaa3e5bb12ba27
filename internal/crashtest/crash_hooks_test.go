package crashtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// hookLedger records every hook event sent and how it ended, and holds
// the checks that an inspected tree must pass given that record.
type hookLedger struct {
	proj string
	// readsLogged: memory reads go through PostToolUse and so also leave
	// a tool-log line (false when a worker calls memory.Observe directly).
	readsLogged bool
	agents      map[string]*agentRecord
	reads       map[string][2]int // memory file → {acknowledged, attempted}
	readLog     map[string][2]int // "agent file" → {acknowledged, attempted} Read lines
}

type agentRecord struct {
	startSent, startAcked bool
	stopSent, stopAcked   bool
	// writes: file (project-relative) → acknowledged; every attempted
	// write is a key.
	writes map[string]bool
	// writesBeforeStop: writes acknowledged before the stop was sent; they
	// must be in the agent's files_touched once the stop is acknowledged.
	writesBeforeStop []string
}

func newHookLedger(proj string) *hookLedger {
	return &hookLedger{proj: proj, readsLogged: true, agents: map[string]*agentRecord{}, reads: map[string][2]int{}, readLog: map[string][2]int{}}
}

func (h *hookLedger) agent(id string) *agentRecord {
	a := h.agents[id]
	if a == nil {
		a = &agentRecord{writes: map[string]bool{}}
		h.agents[id] = a
	}
	return a
}

// hookEvent is one `nexus hook` process to run.
type hookEvent struct {
	kind    string // start, write, read, stop
	agent   string
	file    string // absolute
	payload []byte
}

func (h *hookLedger) event(kind, agent, file string) hookEvent {
	p := map[string]any{"cwd": h.proj, "agent_id": agent, "agent_type": "nexus:engineer"}
	switch kind {
	case "start":
		p["hook_event_name"] = "SubagentStart"
	case "stop":
		p["hook_event_name"] = "SubagentStop"
		p["last_assistant_message"] = "done " + agent
	case "write":
		p["hook_event_name"], p["tool_name"] = "PostToolUse", "Write"
		p["tool_input"] = map[string]any{"file_path": file, "content": "x"}
		p["tool_response"] = map[string]any{"type": "create"}
	case "read":
		p["hook_event_name"], p["tool_name"] = "PostToolUse", "Read"
		p["tool_input"] = map[string]any{"file_path": file}
		p["tool_response"] = map[string]any{"type": "text"}
	}
	b, _ := json.Marshal(p)
	return hookEvent{kind: kind, agent: agent, file: file, payload: b}
}

func (h *hookLedger) rel(file string) string {
	r, _ := filepath.Rel(h.proj, file)
	return filepath.ToSlash(r)
}

// sent records that ev is about to run.
func (h *hookLedger) sent(ev hookEvent) {
	a := h.agent(ev.agent)
	switch ev.kind {
	case "start":
		a.startSent = true
	case "stop":
		a.stopSent = true
		for f, ok := range a.writes {
			if ok {
				a.writesBeforeStop = append(a.writesBeforeStop, f)
			}
		}
	case "write":
		a.writes[h.rel(ev.file)] = false
	case "read":
		r := h.reads[ev.file]
		r[1]++
		h.reads[ev.file] = r
		k := ev.agent + " " + h.rel(ev.file)
		r = h.readLog[k]
		r[1]++
		h.readLog[k] = r
	}
}

// acked records that ev's process finished its work.
func (h *hookLedger) acked(ev hookEvent) {
	a := h.agent(ev.agent)
	switch ev.kind {
	case "start":
		a.startAcked = true
	case "stop":
		a.stopAcked = true
	case "write":
		a.writes[h.rel(ev.file)] = true
	case "read":
		r := h.reads[ev.file]
		r[0]++
		h.reads[ev.file] = r
		k := ev.agent + " " + h.rel(ev.file)
		r = h.readLog[k]
		r[0]++
		h.readLog[k] = r
	}
}

// check compares an inspected tree with the record: nothing acknowledged
// is missing, nothing appears that was never sent, nothing is doubled.
func (h *hookLedger) check(s *snapshot) []string {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	entries := map[string][]state.TrackerEntry{}
	for _, e := range s.Tracker {
		entries[e.AgentID] = append(entries[e.AgentID], e)
		if a := h.agents[e.AgentID]; a == nil || (!a.startSent && !a.stopSent) {
			bad("tracker has agent %s, which never started or stopped", e.AgentID)
		}
	}
	logged := map[string]int{} // "agent tool file" → lines
	for _, l := range s.ToolLog {
		logged[l.AgentID+" "+l.Tool+" "+l.File]++
	}
	for id, a := range h.agents {
		es := entries[id]
		if len(es) > 1 {
			bad("tracker has %d entries for %s", len(es), id)
		}
		if (a.startAcked || a.stopAcked) && len(es) == 0 {
			bad("agent %s: acknowledged start/stop, but no tracker entry", id)
			continue
		}
		if a.stopAcked {
			e := es[0]
			if e.Status != state.AgentCompleted || e.LastMessage == nil || *e.LastMessage != "done "+id {
				bad("agent %s: acknowledged stop, entry %+v", id, e)
			}
			touched := map[string]bool{}
			for _, f := range e.FilesTouched {
				touched[f] = true
				if _, ok := a.writes[f]; !ok {
					bad("agent %s: files_touched has %s, never written", id, f)
				}
			}
			for _, f := range a.writesBeforeStop {
				if !touched[f] {
					bad("agent %s: acknowledged write %s missing from files_touched %v", id, f, e.FilesTouched)
				}
			}
		}
		for f, ok := range a.writes {
			n := logged[id+" Write "+f]
			delete(logged, id+" Write "+f)
			if (ok && n != 1) || n > 1 {
				bad("agent %s: write of %s (acknowledged %v) has %d tool-log lines", id, f, ok, n)
			}
		}
	}
	for k, r := range h.readLog {
		if !h.readsLogged {
			break
		}
		agent, file, _ := strings.Cut(k, " ")
		n := logged[agent+" Read "+file]
		delete(logged, agent+" Read "+file)
		if n < r[0] || n > r[1] {
			bad("%s read %s: %d tool-log lines, want %d acknowledged to %d attempted", agent, file, n, r[0], r[1])
		}
	}
	for k, n := range logged {
		bad("tool log has %d line(s) %q nobody sent", n, k)
	}
	for f, r := range h.reads {
		n := s.Access[f].AccessCount
		if n < int64(r[0]) || n > int64(r[1]) {
			bad("memory file %s: access_count %d, want %d acknowledged to %d attempted reads", f, n, r[0], r[1])
		}
	}
	for p := range s.Access {
		if _, ok := h.reads[p]; !ok {
			bad("memory-access has %s, never read", p)
		}
	}
	return probs
}

// TestCrashHooks SIGKILLs `nexus hook` processes at random moments while
// three subagents' events run at once (SubagentStart, PostToolUse writes
// and memory reads, SubagentStop), each event its own process as Claude
// Code runs them. After every round with a kill, the tracker, tool log and
// memory-access log parse and validate, every acknowledged event (exit 0,
// nothing on stderr) is on disk, and a killed event is there at most once.
// Kills: 150 (30 with -short).
func TestCrashHooks(t *testing.T) {
	t.Parallel()
	bin := nexusBinary(t)
	rng := seed(t)
	sch := schema.NewCoreSet(testenv.CoreDir(t))
	home, proj := t.TempDir(), t.TempDir()
	env := nexusEnv(t, home, "")
	l, _ := state.NewLayout(proj, "")
	var memFiles []string
	for i := 0; i < 4; i++ {
		f := filepath.Join(l.MemoryDir(), fmt.Sprintf("pattern-crash-%d.md", i))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("# crash\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		memFiles = append(memFiles, f)
	}
	runHook := func(payload []byte, killAfter time.Duration) (killed bool, stderr string, took time.Duration) {
		cmd := exec.Command(bin, "--project", proj, "hook", "--host", "claude")
		cmd.Dir, cmd.Env, cmd.Stdin = proj, env, bytes.NewReader(payload)
		t0 := time.Now()
		p, err := startKilled(cmd, killAfter)
		if err != nil {
			t.Fatal(err)
		}
		k, err := p.wait()
		if !k && err != nil {
			t.Fatalf("nexus hook: %v\n%s", err, p.stderr.String())
		}
		return k, p.stderr.String(), time.Since(t0)
	}
	if k, stderr, _ := runHook([]byte(`{"hook_event_name":"SessionStart","source":"startup","cwd":"`+proj+`"}`), -1); k || stderr != "" {
		t.Fatalf("session start: %s", stderr)
	}

	led := newHookLedger(proj)
	// Each lane runs one agent at a time: start, four tool calls, stop.
	const lanes = 3
	var queues [lanes][]hookEvent
	agentSeq := 0
	refill := func(i int) {
		agentSeq++
		id := fmt.Sprintf("agent-%d", agentSeq)
		q := []hookEvent{led.event("start", id, "")}
		for c := 0; c < 4; c++ {
			if rng.Intn(2) == 0 {
				q = append(q, led.event("write", id, filepath.Join(proj, "src", id, fmt.Sprintf("f%d.go", c))))
			} else {
				q = append(q, led.event("read", id, memFiles[rng.Intn(len(memFiles))]))
			}
		}
		queues[i] = append(q, led.event("stop", id, ""))
	}
	want := kills(150)
	stop := deadline(2 * time.Minute)
	killed, rounds := 0, 0
	typical := 8 * time.Millisecond
	var durations []time.Duration
	residue := map[string]bool{}
	for killed < want && time.Now().Before(stop) {
		rounds++
		type result struct {
			ev     hookEvent
			killed bool
			stderr string
			took   time.Duration
		}
		results := make([]result, lanes)
		var wg sync.WaitGroup
		for i := 0; i < lanes; i++ {
			if len(queues[i]) == 0 {
				refill(i)
			}
			ev := queues[i][0]
			queues[i] = queues[i][1:]
			led.sent(ev)
			killAfter := time.Duration(-1)
			if rng.Intn(10) < 4 {
				killAfter = time.Duration(rng.Int63n(int64(typical * 3 / 2)))
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				k, stderr, took := runHook(ev.payload, killAfter)
				results[i] = result{ev, k, stderr, took}
			}(i)
		}
		wg.Wait()
		roundKills := 0
		for _, r := range results {
			switch {
			case r.killed:
				roundKills++
			case r.stderr != "":
				t.Fatalf("%s of %s failed: %s", r.ev.kind, r.ev.agent, r.stderr)
			default:
				led.acked(r.ev)
				durations = append(durations, r.took)
			}
		}
		// Kill within 1.5 times the typical lifetime of a hook process
		// under this load (the median of the last 50 that finished).
		if n := len(durations); n >= 10 {
			recent := append([]time.Duration(nil), durations[max(0, n-50):]...)
			sort.Slice(recent, func(i, j int) bool { return recent[i] < recent[j] })
			typical = recent[len(recent)/2]
		}
		if roundKills == 0 {
			continue
		}
		killed += roundKills
		snap, probs := inspect(l, sch)
		probs = append(probs, led.check(snap)...)
		if len(probs) > 0 {
			t.Fatalf("after round %d (%d kills so far):\n%s", rounds, killed, strings.Join(probs, "\n"))
		}
		for _, r := range snap.Residue {
			residue[r] = true
		}
	}
	if killed < want/3 {
		t.Fatalf("only %d of %d kills before the deadline", killed, want)
	}
	snap, probs := inspect(l, sch)
	probs = append(probs, led.check(snap)...)
	if len(probs) > 0 {
		t.Fatalf("at the end:\n%s", strings.Join(probs, "\n"))
	}
	acked := 0
	for _, a := range led.agents {
		for _, ok := range a.writes {
			if ok {
				acked++
			}
		}
	}
	var counts []string
	for f, r := range led.reads {
		counts = append(counts, fmt.Sprintf("%s %d/%d", filepath.Base(f), r[0], r[1]))
	}
	sort.Strings(counts)
	t.Logf("typical hook process %s; %d kills in %d rounds of %d processes; %d agents, %d acknowledged writes, memory reads acknowledged/attempted: %s; torn tool-log tail at the end: %v; %d temporary files left",
		typical, killed, rounds, lanes, len(led.agents), acked, strings.Join(counts, ", "), snap.ToolLogTorn, len(residue))
}
