package crashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
)

// decisionFile is one parsed decisions/*.md.
type decisionFile struct {
	stem string
	d    *decision.Decision
}

// inspectDecisions parses every file of a decision store the way nexus
// reads it: each decisions/*.md with the decision parser (numbers unique),
// .decision-hashes.json and every snapshots/v*.json as JSON objects.
func inspectDecisions(store string) (map[string]decisionFile, []string) {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	byTitle := map[string]decisionFile{}
	ents, err := os.ReadDir(filepath.Join(store, "decisions"))
	if err != nil {
		return nil, []string{err.Error()}
	}
	nums := map[int]string{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(store, "decisions", e.Name()))
		if err != nil {
			bad("read %s: %v", e.Name(), err)
			continue
		}
		d, err := decision.Parse(string(b), e.Name())
		if err != nil {
			bad("decisions/%s does not parse: %v\n%s", e.Name(), err, b)
			continue
		}
		if other, dup := nums[d.Num]; dup {
			bad("decision number %d used by %s and %s", d.Num, other, e.Name())
		}
		nums[d.Num] = e.Name()
		if _, dup := byTitle[d.Title]; dup {
			bad("two decisions titled %q", d.Title)
		}
		byTitle[d.Title] = decisionFile{strings.TrimSuffix(e.Name(), ".md"), d}
	}
	jsonObject := func(path string) {
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return
		}
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil {
			bad("%s is not a JSON object (%v, %d bytes)", path, err, len(b))
		}
	}
	jsonObject(filepath.Join(store, ".decision-hashes.json"))
	snaps, _ := filepath.Glob(filepath.Join(store, "snapshots", "v*.json"))
	for _, s := range snaps {
		jsonObject(s)
	}
	return byTitle, probs
}

// TestCrashDecisions SIGKILLs `nexus decision propose` processes (two at
// a time, adds and supersessions) at random moments. After every round with
// a kill every decision file parses with the decision parser, numbers are
// unique, the hash index and snapshots are JSON, every acknowledged
// decision (exit 0) is on disk exactly once, a killed one at most once, and
// an acknowledged supersession shows on both decisions. Kills: 80 (16 with
// -short).
func TestCrashDecisions(t *testing.T) {
	t.Parallel()
	bin := nexusBinary(t)
	rng := seed(t)
	home, proj := t.TempDir(), t.TempDir()
	env := nexusEnv(t, home, "")
	run := func(killAfter time.Duration, args ...string) (killed bool, stdout, stderr string, took time.Duration, err error) {
		cmd := exec.Command(bin, append([]string{"--project", proj, "decision"}, args...)...)
		cmd.Dir, cmd.Env = proj, env
		t0 := time.Now()
		p, err := startKilled(cmd, killAfter)
		if err != nil {
			t.Fatal(err)
		}
		k, err := p.wait()
		return k, p.stdout.String(), p.stderr.String(), time.Since(t0), err
	}
	type proposal struct {
		title      string
		supersedes string // title of the decision it replaces
		acked      bool
	}
	var (
		store     string
		pre       map[string]decisionFile // the scaffold's decisions
		proposals []*proposal
		active    []string          // acknowledged, not superseded by anything sent
		stems     map[string]string // title → file stem, from answers and inspections
	)
	recorded := regexp.MustCompile(`Recorded (\S+) \(`)
	words := strings.Fields("cache queue ledger tenant replica index shard webhook token retry backoff canary rollout schema export audit archive bucket stream")
	seq := 0
	want := kills(80)
	stop := deadline(2 * time.Minute)
	killed, rounds, stores, supersessions, acked := 0, 0, 0, 0, 0
	typical := 30 * time.Millisecond
	var durations []time.Duration
	for killed < want && time.Now().Before(stop) {
		// A fresh store every 20 kills: proposing gets slower as a store
		// grows (every confirmed proposal snapshots the whole store).
		if store == "" || killed >= 20*stores {
			stores++
			store = filepath.Join(proj, fmt.Sprintf("store-%d", stores))
			if _, out, errOut, _, err := run(-1, "init", "--store", store, "crash"); err != nil {
				t.Fatalf("decision init: %v\n%s%s", err, out, errOut)
			}
			var probs []string
			if pre, probs = inspectDecisions(store); len(probs) > 0 {
				t.Fatal(strings.Join(probs, "\n"))
			}
			proposals, active, stems = nil, nil, map[string]string{}
		}
		rounds++
		const lanes = 2
		type result struct {
			p        *proposal
			killed   bool
			out, err string
			took     time.Duration
			runErr   error
		}
		results := make([]result, lanes)
		var wg sync.WaitGroup
		for i := 0; i < lanes; i++ {
			seq++
			p := &proposal{title: fmt.Sprintf("Crash decision %d adopts %s %s", seq, words[rng.Intn(len(words))], words[rng.Intn(len(words))])}
			args := []string{"propose", "--store", store, "--title", p.title,
				"--rationale", fmt.Sprintf("Because the %s and the %s must survive a killed writer (case %d).", words[rng.Intn(len(words))], words[rng.Intn(len(words))], seq),
				"--rejected", "Nothing: a decision store that loses decisions is no store"}
			// Supersede an acknowledged decision now and then (two files
			// change: the new one, then the old one's status). Only one
			// lane supersedes, so no decision is replaced twice at once.
			if i == 0 && len(active) > 0 && rng.Intn(4) == 0 {
				j := rng.Intn(len(active))
				p.supersedes = active[j]
				active = append(active[:j], active[j+1:]...)
				supersessions++
				args = append(args, "--operation", "supersede", "--affected", stems[p.supersedes])
			}
			proposals = append(proposals, p)
			killAfter := time.Duration(-1)
			if rng.Intn(2) == 0 {
				killAfter = time.Duration(rng.Int63n(int64(typical * 3 / 2)))
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				k, out, errOut, took, err := run(killAfter, args...)
				results[i] = result{p, k, out, errOut, took, err}
			}(i)
		}
		wg.Wait()
		roundKills := 0
		for _, r := range results {
			switch {
			case r.killed:
				roundKills++
			case r.runErr != nil || !recorded.MatchString(r.out):
				t.Fatalf("propose %q: %v\n%s%s", r.p.title, r.runErr, r.out, r.err)
			default:
				r.p.acked = true
				acked++
				stems[r.p.title] = recorded.FindStringSubmatch(r.out)[1]
				active = append(active, r.p.title)
				durations = append(durations, r.took)
			}
		}
		if n := len(durations); n >= 5 {
			recent := append([]time.Duration(nil), durations[max(0, n-30):]...)
			sort.Slice(recent, func(i, j int) bool { return recent[i] < recent[j] })
			typical = recent[len(recent)/2]
		}
		if roundKills == 0 && rounds%10 != 0 {
			continue
		}
		killed += roundKills
		got, probs := inspectDecisions(store)
		known := map[string]bool{}
		for t := range pre {
			known[t] = true
		}
		for _, p := range proposals {
			known[p.title] = true
			f, ok := got[p.title]
			if p.acked && !ok {
				probs = append(probs, fmt.Sprintf("acknowledged decision %q is missing", p.title))
			}
			if !p.acked || p.supersedes == "" {
				continue
			}
			old := got[p.supersedes]
			if old.d == nil || old.d.Status != decision.StatusSuperseded || old.d.SupersededBy != fmt.Sprint(f.d.Num) {
				probs = append(probs, fmt.Sprintf("acknowledged supersession of %q by %q (D%d) not on disk: %+v", p.supersedes, p.title, f.d.Num, old.d))
			}
		}
		for title := range got {
			if !known[title] {
				probs = append(probs, fmt.Sprintf("decision %q was never proposed", title))
			}
		}
		if len(probs) > 0 {
			t.Fatalf("after round %d (%d kills):\n%s", rounds, killed, strings.Join(probs, "\n"))
		}
		// Later supersessions need the stems of what is on disk now; a
		// decision whose supersession was killed half-way is left alone.
		for title, f := range got {
			stems[title] = f.stem
		}
		var still []string
		for _, title := range active {
			if d, ok := got[title]; ok && d.d.Status == decision.StatusActive {
				still = append(still, title)
			}
		}
		active = still
	}
	if killed < want/3 {
		t.Fatalf("only %d of %d kills before the deadline", killed, want)
	}
	t.Logf("typical propose process %s; %d kills in %d rounds over %d stores; %d proposals, %d acknowledged, %d supersessions sent",
		typical, killed, rounds, stores, 2*rounds, acked, supersessions)
}
