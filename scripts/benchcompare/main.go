// Command benchcompare times the start-up-bound nexus processes of several
// builds side by side: `nexus version`, a PostToolUse hook (an engineer's
// Edit in a project mid-session) and `nexus decision list` (a store of ten
// decisions), each build taking turns with the others (internal/proctime),
// so a change of machine load affects all alike. It is how a change that
// could slow start-up (embedding the distribution, a new dependency, where
// a command runs) is checked against the build before it. A build's
// nexus-plugins is expected beside its nexus (`nexus decision` runs there
// since issue 25):
//
//	scripts/bench-compare.sh REV            # REV against the working tree
//	go run ./scripts/benchcompare -runs 200 before=/tmp/old/nexus after=bin/nexus after-builtin=bin/nexus,builtin
//
// Each argument is LABEL=BINARY[,builtin]: the build is given the vendored
// distribution through NEXUS_CORE_DIR (as every build before the built-in
// one needed), or, with ",builtin", none, so it uses the one it carries.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/proctime"
)

type build struct {
	label, bin string
	builtin    bool
}

func main() {
	runs := flag.Int("runs", 200, "measured processes per command and build")
	core := flag.String("core", "", "distribution directory given to builds without ,builtin (default: the vendored third_party/nexus-core/dist)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchcompare [-runs N] [-core DIR] LABEL=BINARY[,builtin]...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var builds []build
	for _, a := range flag.Args() {
		label, rest, ok := strings.Cut(a, "=")
		if !ok || label == "" || rest == "" {
			fail(fmt.Errorf("argument %q is not LABEL=BINARY[,builtin]", a))
		}
		bin, opt, _ := strings.Cut(rest, ",")
		if opt != "" && opt != "builtin" {
			fail(fmt.Errorf("argument %q: unknown option %q (only ,builtin)", a, opt))
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			fail(err)
		}
		builds = append(builds, build{label, abs, opt == "builtin"})
	}
	if *core == "" {
		root, err := moduleRoot()
		if err != nil {
			fail(err)
		}
		*core = filepath.Join(root, "third_party", "nexus-core", "dist")
	}
	if err := run(builds, *core, *runs); err != nil {
		fail(err)
	}
}

func run(builds []build, core string, runs int) error {
	work, err := os.MkdirTemp("", "nexus-benchcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	home := filepath.Join(work, "home")
	proj := filepath.Join(work, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		return err
	}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"NAURO_HOME=" + filepath.Join(work, "nauro")}
	envOf := func(b build) []string {
		if b.builtin {
			return base
		}
		return append(append([]string(nil), base...), "NEXUS_CORE_DIR="+core)
	}
	if err := setUp(builds[0].bin, envOf(builds[0]), proj); err != nil {
		return err
	}
	post := filepath.Join(work, "post.json")
	payload, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "cwd": proj, "agent_id": "eng1", "agent_type": "nexus:engineer",
		"tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(proj, "src/cache.go"), "old_string": "a", "new_string": "b"},
		"tool_response": map[string]any{"filePath": filepath.Join(proj, "src/cache.go")}})
	if err := os.WriteFile(post, payload, 0o644); err != nil {
		return err
	}
	listed := func(stdout, stderr []byte) error {
		if !strings.Contains(string(stdout), "Decisions (11 total)") || len(stderr) > 0 {
			return fmt.Errorf("decision list: %q %q", stdout, stderr)
		}
		return nil
	}
	quiet := func(stdout, stderr []byte) error {
		if len(stdout) > 0 || len(stderr) > 0 {
			return fmt.Errorf("unexpected output: %q %q", stdout, stderr)
		}
		return nil
	}
	var specs []proctime.Spec
	for _, b := range builds {
		specs = append(specs,
			proctime.Spec{Name: "version\t" + b.label, Path: b.bin, Args: []string{"version"}, Env: envOf(b), Dir: proj},
			proctime.Spec{Name: "PostToolUse\t" + b.label, Path: b.bin, Args: []string{"hook", "--host", "claude"}, Env: envOf(b), Dir: proj, Stdin: post, Check: quiet},
			proctime.Spec{Name: "decision list\t" + b.label, Path: b.bin, Args: []string{"decision", "list"}, Env: envOf(b), Dir: proj, Check: listed})
	}
	load := loadAvg()
	start := time.Now()
	res, err := proctime.Measure(context.Background(), specs, proctime.Options{Runs: runs, Warmup: 10})
	if err != nil {
		return err
	}
	fmt.Printf("command\tbuild\tmedian ms\tp90 ms\tmin ms\tCPU ms\truns\n")
	for _, r := range res {
		fmt.Printf("%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\n", r.Name, ms(r.Median), ms(r.P90), ms(r.Min), ms(r.CPU), r.Runs)
	}
	for _, b := range builds {
		st, err := os.Stat(b.bin)
		if err == nil {
			fmt.Printf("size\t%s\t%d bytes\n", b.label, st.Size())
		}
	}
	fmt.Printf("# %s, load average %s at start; interleaved runs; distribution %s unless built in\n", time.Since(start).Round(time.Second), load, core)
	return nil
}

// setUp leaves the project mid-session: a plan with decisions, eight
// tasks, twenty memory files, two agents running; and a decision store of
// ten decisions (and the initial one).
func setUp(bin string, env []string, proj string) error {
	hook := func(p map[string]any) error {
		p["cwd"] = proj
		b, _ := json.Marshal(p)
		cmd := exec.Command(bin, "hook", "--host", "claude")
		cmd.Dir, cmd.Env, cmd.Stdin = proj, env, strings.NewReader(string(b))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("set-up %v: %v\n%s", p["hook_event_name"], err, out)
		}
		return nil
	}
	if err := hook(map[string]any{"hook_event_name": "SessionStart"}); err != nil {
		return err
	}
	write := func(rel, content string) error {
		p := filepath.Join(proj, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	var tasks []string
	for i := 1; i <= 8; i++ {
		tasks = append(tasks, fmt.Sprintf(`{"id":%d,"title":"task %d","context":"c","status":"pending","deps":[],"owner":"engineer","created_at":"2026-04-16T08:00:00.000Z"}`, i, i))
	}
	err := errors.Join(
		write(".nexus/state/plan.json", `{"schema_version":"0.5","id":1,"topic":"cache","issues":[{"id":1,"title":"eviction","status":"decided","decision":"LRU"},{"id":2,"title":"size","status":"pending"}],"research_summary":"r","created_at":"2026-04-16T08:00:00.000Z"}`),
		write(".nexus/state/tasks.json", `{"goal":"cache","decisions":["LRU"],"tasks":[`+strings.Join(tasks, ",")+`]}`),
	)
	for i := 0; i < 20; i++ {
		err = errors.Join(err, write(fmt.Sprintf(".nexus/memory/pattern-topic-%02d.md", i), "# topic\n"))
	}
	if err != nil {
		return err
	}
	for _, a := range [][2]string{{"eng1", "nexus:engineer"}, {"arc1", "nexus:architect"}} {
		if err := hook(map[string]any{"hook_event_name": "SubagentStart", "agent_id": a[0], "agent_type": a[1]}); err != nil {
			return err
		}
	}
	decision := func(args ...string) error {
		cmd := exec.Command(bin, append([]string{"decision"}, args...)...)
		cmd.Dir, cmd.Env = proj, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("set-up decision %v: %v\n%s", args, err, out)
		}
		return nil
	}
	if err := decision("init", "bench"); err != nil {
		return err
	}
	for i := 1; i <= 10; i++ {
		if err := decision("propose", "--title", fmt.Sprintf("Use component %d for subsystem %d", i, i),
			"--rationale", fmt.Sprintf("Subsystem %d needs a dependable component with a long track record.", i)); err != nil {
			return err
		}
	}
	return nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run benchcompare inside the nexus module")
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchcompare:", err)
	os.Exit(2)
}
