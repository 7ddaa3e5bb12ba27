package memory

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

var (
	coreOnce sync.Once
	core     *vocabulary.Core
	coreErr  error
	schemas  *schema.Set
)

func loadCore(t testing.TB) (*vocabulary.Core, *schema.Set) {
	t.Helper()
	dir := testenv.CoreDir(t)
	coreOnce.Do(func() {
		core, coreErr = vocabulary.LoadManifest(dir)
		schemas = schema.NewCoreSet(dir)
	})
	if coreErr != nil {
		t.Fatal(coreErr)
	}
	return core, schemas
}

// project is a scratch project with a memory manager.
type project struct {
	t   testing.TB
	dir string
	m   *Manager
	now time.Time
}

// newProject makes a project in a fresh directory. yaml is the content of
// .nexus/nexus.yaml ("" = none). The clock is fixed at now.
func newProject(t testing.TB, settings Options, now time.Time) *project {
	t.Helper()
	dir := t.TempDir()
	return newProjectAt(t, dir, settings, now)
}

// defaultThreshold is memory.merge.threshold's default.
const defaultThreshold = 0.35

// newProjectAt makes a project in dir whose memory has the given settings
// (GC, MergeThreshold; 0 = the default threshold).
func newProjectAt(t testing.TB, dir string, settings Options, now time.Time) *project {
	t.Helper()
	c, set := loadCore(t)
	if err := os.MkdirAll(filepath.Join(dir, ".nexus", "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := state.NewLayout(dir, "nexus")
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(l, set)
	clock := func() time.Time { return now }
	if now.IsZero() {
		clock = time.Now
	}
	st.Now = clock
	o := settings
	if o.MergeThreshold == 0 {
		o.MergeThreshold = defaultThreshold
	}
	o.Store, o.Policy, o.Now, o.ToolPrefix = st, c.MemoryPolicy(), clock, "nx_"
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &project{t: t, dir: dir, m: m, now: now}
}

func (p *project) mem(name string) string { return filepath.Join(p.dir, ".nexus", "memory", name) }

func (p *project) write(name, content string) string {
	p.t.Helper()
	path := p.mem(name)
	writeFile(p.t, path, content)
	return path
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// records returns the access records by path.
func (p *project) records() map[string]state.MemoryAccess {
	p.t.Helper()
	recs, err := p.m.Records()
	if err != nil {
		p.t.Fatal(err)
	}
	out := map[string]state.MemoryAccess{}
	for _, r := range recs {
		out[r.Path] = r
	}
	return out
}

// setRecords replaces the access log with the given records.
func (p *project) setRecords(recs ...state.MemoryAccess) {
	p.t.Helper()
	err := p.m.store.UpdateMemoryAccess(context.Background(), func([]state.MemoryAccess) ([]state.MemoryAccess, error) {
		return recs, nil
	})
	if err != nil {
		p.t.Fatal(err)
	}
}

// setHistory writes history.json with one cycle per completion time.
func (p *project) setHistory(completed ...time.Time) {
	p.t.Helper()
	var cycles []any
	for _, c := range completed {
		cycles = append(cycles, map[string]any{"schema_version": "0.5", "completed_at": state.Format(c),
			"branch": "main", "plan": nil, "tasks": []any{}})
	}
	b, _ := json.Marshal(map[string]any{"schema_version": "0.5", "cycles": cycles})
	writeFile(p.t, filepath.Join(p.dir, ".nexus", "history.json"), string(b))
}

// assertLogValid checks every line of the access log against the schema.
func assertLogValid(t testing.TB, path string) int {
	t.Helper()
	_, set := loadCore(t)
	b, _, err := state.ReadStable(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a newline", path)
	}
	n := 0
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d of %s is not JSON: %q", i+1, path, line)
		}
		if ps, err := set.Validate(schema.StateMemory, v); err != nil || len(ps) > 0 {
			t.Fatalf("line %d of %s is invalid: %v %v", i+1, path, ps, err)
		}
		n++
	}
	return n
}

// git runs git in dir with a clean configuration and optional extra env.
func git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// isolateGit gives git a private configuration (identity, no signing)
// and stops it from finding a repository above root.
func isolateGit(t *testing.T, root string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, cfg, "[user]\n\tname = Nexus Test\n\temail = nexus@example.invalid\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
}

// commitAt commits everything staged with the given date.
func commitAt(t testing.TB, dir string, when time.Time, msg string) {
	t.Helper()
	d := when.UTC().Format(time.RFC3339)
	git(t, dir, []string{"GIT_AUTHOR_DATE=" + d, "GIT_COMMITTER_DATE=" + d}, "commit", "-q", "-m", msg)
}
