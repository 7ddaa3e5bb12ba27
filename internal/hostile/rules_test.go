package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// TestRulesCatchMisbehaviour runs the suite's runner and judge against a
// child that breaks each rule on purpose (the test binary itself, in
// misbehave mode): a suite whose checks cannot fail proves nothing.
func TestRulesCatchMisbehaviour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rssrun")
	}
	rssrun = commands.Path(t, "./internal/testenv/rssrun")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	sc := &scenario{root: root, clone: filepath.Join(root, "clone"), outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home")}
	for _, d := range []string{sc.clone, sc.outside, sc.home, filepath.Join(root, "clone", ".nexus")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		mode string
		env  []string
		wall time.Duration // instead of maxWall
		rss  int64         // instead of maxRSS
		st   step
		want string // the rule's name at the start of a finding; "" = none
	}{
		{name: "a quiet child breaks nothing", mode: "echo", env: []string{"NEXUS_HOSTILE_ECHO=hello"}},
		{name: "a write the step may make", mode: "write", env: []string{"NEXUS_HOSTILE_WRITE=" + filepath.Join(sc.clone, ".nexus", "ok")}, st: step{may: stateMay}},
		{name: "too slow", mode: "sleep", wall: 300 * time.Millisecond, want: "time:"},
		{name: "output held open by a process left behind", mode: "daemon", want: "time:"},
		{name: "too much memory", mode: "alloc", env: []string{"NEXUS_HOSTILE_ALLOC_MB=64"}, rss: 32 << 20, want: "rss:"},
		{name: "a write outside", mode: "write", env: []string{"NEXUS_HOSTILE_WRITE=" + filepath.Join(sc.outside, "pwned")}, st: step{may: stateMay}, want: "outside change:"},
		{name: "a write in the project but not in its own files", mode: "write", env: []string{"NEXUS_HOSTILE_WRITE=" + filepath.Join(sc.clone, "README.md")}, st: step{may: stateMay}, want: "outside change:"},
		{name: "the repository's configuration is never nexus's", mode: "write", env: []string{"NEXUS_HOSTILE_WRITE=" + filepath.Join(sc.clone, ".nexus", "nexus.yaml")}, st: step{may: stateMay}, want: "outside change:"},
		{name: "outside content echoed", mode: "echo", env: []string{"NEXUS_HOSTILE_ECHO=" + canary}, want: "outside read:"},
		{name: "a write the gate let through", mode: "allow", st: step{deny: "claude"}, want: "allowed write:"},
		{name: "a panic", mode: "panic", want: "crash:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, err := take(root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			b := testenv.Bounded{RSSRun: rssrun, Bin: self, Dir: root, Wall: maxWall, RSS: maxRSS}
			if tc.wall > 0 {
				b.Wall = tc.wall
			}
			if tc.rss > 0 {
				b.RSS = tc.rss
			}
			// GORACE: a race-built child would wait a second before exiting.
			b.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0", misbehaveEnv + "=" + tc.mode}, tc.env...)
			o := testenv.RunBounded(b)
			after, err := take(root, nil, before)
			if err != nil {
				t.Fatal(err)
			}
			found := judge(sc, tc.st, o, diff(before, after))
			if tc.want == "" {
				if len(found) > 0 {
					t.Fatalf("findings for a child that broke no rule: %q", found)
				}
				// rssrun measures the child, not the test process
				// (which, race-instrumented, is far larger): see its doc.
				if o.MaxRSS <= 0 || o.MaxRSS > 64<<20 {
					t.Errorf("peak RSS of a child doing nothing: %d bytes", o.MaxRSS)
				}
				return
			}
			for _, f := range found {
				if strings.HasPrefix(f, tc.want) {
					return
				}
			}
			t.Fatalf("no %q finding; got %q (outcome: exit %d, killed %q, %d bytes RSS, stderr %q)", tc.want, found, o.Code, o.Killed, o.MaxRSS, o.Stderr)
		})
	}
	// A child's peak RSS comes from its own rusage: 32 MiB allocated and
	// touched adds at least that to what a child doing nothing reads, and
	// under the limit the child is not killed. (The child is the test
	// binary, race-instrumented under make test: only the difference
	// is the allocation's.)
	env := []string{"GORACE=atexit_sleep_ms=0", misbehaveEnv + "=alloc"}
	idle := run(self, nil, root, append(env, "NEXUS_HOSTILE_ALLOC_MB=0"), nil)
	busy := run(self, nil, root, append(env, "NEXUS_HOSTILE_ALLOC_MB=32"), nil)
	if busy.Killed != "" || idle.Killed != "" || busy.MaxRSS-idle.MaxRSS < 32<<20 {
		t.Errorf("peak RSS: %d bytes idle, %d bytes after allocating 32 MiB (killed %q)", idle.MaxRSS, busy.MaxRSS, busy.Killed)
	}
}
