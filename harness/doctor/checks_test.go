package doctor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func touch(t *testing.T, when time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
}

func layout(t *testing.T) state.Layout {
	t.Helper()
	l, err := state.NewLayout(t.TempDir(), "nexus")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// summary renders findings as "status: message" lines.
func summary(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s: %s\n", f.Status, f.Message)
	}
	return b.String()
}

func expect(t *testing.T, fs []Finding, status Status, text string) {
	t.Helper()
	for _, f := range fs {
		if f.Status == status && strings.Contains(f.Message, text) {
			return
		}
	}
	t.Errorf("no %s finding containing %q in:\n%s", status, text, summary(fs))
}

func TestFindHolder(t *testing.T) {
	const locks = `1: POSIX  ADVISORY  WRITE 900 fe:00:77 0 EOF
2: FLOCK  ADVISORY  WRITE 1234 00:2a:77 0 EOF
2: -> FLOCK  ADVISORY  WRITE 5555 fe:00:77 0 EOF
3: FLOCK  ADVISORY  WRITE 4321 fe:00:77 0 EOF
4: FLOCK  ADVISORY  READ  -1 fe:00:88 0 EOF
garbage line
`
	cases := []struct {
		name         string
		ino          uint64
		major, minor uint64
		pid          int
		found        bool
	}{
		{"device match wins over an earlier inode-only match", 77, 0xfe, 0, 4321, true},
		{"inode alone when no device matches (overlayfs)", 77, 8, 1, 1234, true},
		{"posix locks and waiters are not holders", 99, 0xfe, 0, 0, false},
		{"no pid", 88, 0xfe, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pid, found := findHolder(strings.NewReader(locks), c.ino, c.major, c.minor)
			if pid != c.pid || found != c.found {
				t.Errorf("got %d %v, want %d %v", pid, found, c.pid, c.found)
			}
		})
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".plan.json.tmp-123456":      true,
		".x.md.tmp-1":                true,
		"plan.json.tmp-123":          false, // atomicfile's names start with a dot
		".plan.json.tmp-":            false,
		".plan.json.tmp-12a":         false,
		".tmp-123":                   false,
		".memory-access.jsonl.spare": false,
		"plan.json.lock":             false,
	} {
		if got := isTemp(name); got != want {
			t.Errorf("isTemp(%q) = %v", name, got)
		}
	}
}

func TestSession(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-72 * time.Hour)
	cases := []struct {
		name   string
		setup  func(t *testing.T, l state.Layout)
		status Status
		text   string
	}{
		{"no cycle", func(*testing.T, state.Layout) {}, StatusOK, "no open cycle"},
		{"fresh cycle", func(t *testing.T, l state.Layout) {
			write(t, l.PlanPath(), `{"id":3,"topic":"x","issues":[],"created_at":"2026-05-01T00:00:00Z"}`)
			touch(t, now.Add(-time.Hour), l.PlanPath())
		}, StatusOK, `plan.json (#3 "x", 0 issues) is open; last activity 1h ago`},
		{"stale cycle", func(t *testing.T, l state.Layout) {
			write(t, l.TasksPath(), `{"goal":"g","decisions":[],"tasks":[]}`)
			touch(t, old, l.TasksPath())
		}, StatusWarn, "tasks.json (0 tasks, 0 not completed) is open, but no session has touched .nexus/state for 3d"},
		{"an old cycle in a live session is not stale", func(t *testing.T, l state.Layout) {
			write(t, l.TasksPath(), `{"goal":"g","decisions":[],"tasks":[]}`)
			write(t, l.ToolLogPath(), "{}\n")
			touch(t, old, l.TasksPath())
			touch(t, now.Add(-time.Minute), l.ToolLogPath())
		}, StatusOK, "last activity 1m ago"},
		{"a co-running harness keeps the shared cycle alive", func(t *testing.T, l state.Layout) {
			write(t, l.PlanPath(), `{"id":1,"topic":"x","issues":[],"created_at":"2026-05-01T00:00:00Z"}`)
			other := filepath.Join(l.StateDir(), "claude-nexus")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			touch(t, old, l.PlanPath())
			touch(t, now.Add(-2*time.Minute), other)
		}, StatusOK, "other harnesses active recently: claude-nexus"},
		{"tracker left by a session that ended", func(t *testing.T, l state.Layout) {
			write(t, l.TrackerPath(), `[{"harness_id":"nexus","started_at":"2026-04-01T00:00:00Z","status":"running"},{"harness_id":"nexus","started_at":"2026-04-01T00:00:00Z","status":"completed"}]`)
			touch(t, old, l.TrackerPath())
		}, StatusWarn, "ended without SessionEnd (unchanged for 3d; 1 agent(s) still marked running)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := layout(t)
			c.setup(t, l)
			fs := Session{Layout: l, Now: func() time.Time { return now }, ToolRef: func(s string) string { return "nx_" + s }}.Run(context.Background())
			expect(t, fs, c.status, c.text)
			for _, f := range fs {
				if f.Fixable {
					t.Errorf("the session check never fixes anything: %+v", f)
				}
				if f.Status == StatusWarn && strings.Contains(f.Message, "is open") && !strings.Contains(f.Fix, "nx_task_close") {
					t.Errorf("a stale cycle's fix names task_close: %q", f.Fix)
				}
			}
		})
	}
}

func TestLocksHeldAndTemporaryFiles(t *testing.T) {
	l := layout(t)
	lockPath := filepath.Join(l.StateDir(), "plan.json.lock")
	held, err := filelock.AcquirePath(context.Background(), lockPath, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(l.StateDir(), "tasks.json.lock"), "") // on disk, free
	oldTemp := filepath.Join(l.HarnessDir(), ".agent-tracker.json.tmp-99")
	freshTemp := filepath.Join(l.ArtifactsDir(), "sub", ".report.md.tmp-7")
	write(t, oldTemp, "[")
	write(t, freshTemp, "x")
	touch(t, time.Now().Add(-time.Hour), oldTemp)
	// Inside another harness's namespace nothing is looked at.
	write(t, filepath.Join(l.StateDir(), "other-harness", ".x.tmp-1"), "")
	touch(t, time.Now().Add(-time.Hour), filepath.Join(l.StateDir(), "other-harness", ".x.tmp-1"))

	c := Locks{Layout: l, Grace: 20 * time.Millisecond}
	fs := c.Run(context.Background())
	holder := "by "
	if runtime.GOOS == "linux" {
		holder = fmt.Sprintf("by pid %d", os.Getpid())
	}
	expect(t, fs, StatusWarn, lockPath+" has been held for over 20ms "+holder)
	expect(t, fs, StatusWarn, "1 temporary file left by writers that were killed: "+oldTemp)
	if strings.Contains(summary(fs), "tasks.json.lock") {
		t.Errorf("a free lock file was reported:\n%s", summary(fs))
	}

	held.Release()
	rep := Run(context.Background(), []Check{c}, true)
	if len(rep.Fixed) != 1 || !strings.Contains(rep.Fixed[0].Did, "removed 1 leftover temporary file: .agent-tracker.json.tmp-99") || !rep.Healthy || rep.Warnings != 0 {
		t.Errorf("fix: %+v", rep)
	}
	if state.Exists(oldTemp) || !state.Exists(freshTemp) {
		t.Errorf("old temp exists %v, fresh temp exists %v", state.Exists(oldTemp), state.Exists(freshTemp))
	}
}

func TestGitignore(t *testing.T) {
	cases := []struct {
		name    string
		content *string
		status  Status
		text    string
		after   string // content after --fix ("" = unchanged)
	}{
		{"minimal", ptr("state/\n"), StatusOK, "ignores state/", ""},
		{"upstream whitelist form", ptr("*\n!.gitignore\n!memory/\n!memory/**\n!history.json\n"), StatusOK, "ignores state/", ""},
		{"missing", nil, StatusWarn, ".gitignore is missing", "state/\n"},
		{"state not ignored", ptr("node_modules"), StatusError, "does not ignore state/", "node_modules\nstate/\n"},
		{"tracked folders ignored", ptr("state/\nmemory/\nhistory.json\n"), StatusWarn, "ignores memory/, history.json, which nexus-core keeps in git", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := layout(t)
			if err := os.MkdirAll(l.Nexus, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.content != nil {
				write(t, l.GitignorePath(), *c.content)
			}
			g := Gitignore{Layout: l}
			expect(t, g.Run(context.Background()), c.status, c.text)
			Run(context.Background(), []Check{g}, true)
			b, _ := os.ReadFile(l.GitignorePath())
			want := c.after
			if want == "" && c.content != nil {
				want = *c.content
			}
			if string(b) != want {
				t.Errorf("after --fix: %q, want %q", b, want)
			}
		})
	}
	t.Run("no .nexus yet", func(t *testing.T) {
		expect(t, Gitignore{Layout: layout(t)}.Run(context.Background()), StatusOK, "no ")
	})
}

func ptr(s string) *string { return &s }

func TestConfig(t *testing.T) {
	fs := Config{Problems: []ConfigProblem{
		{What: "the user configuration /u.yaml", Err: errors.New("/u.yaml:1:3: mcp.tool_prefx: unknown configuration key"), Effect: "so it is ignored", Fix: "rename it"},
		{What: "the project configuration /p/.nexus/nexus.yaml", Err: errors.New("invalid YAML"), Effect: "nexus reads nothing from this file until it is fixed", Broken: true, Fix: "fix it"},
	}}.Run(context.Background())
	// A key left out is a warning; a file left out whole, an error.
	expect(t, fs, StatusWarn, "the user configuration /u.yaml: /u.yaml:1:3: mcp.tool_prefx: unknown configuration key; so it is ignored")
	expect(t, fs, StatusError, "the project configuration /p/.nexus/nexus.yaml does not load: invalid YAML; nexus reads nothing")
	if len(fs) != 2 || fs[0].Fix != "rename it" || fs[1].Fix != "fix it" {
		t.Errorf("want one finding per problem, with its fix:\n%s", summary(fs))
	}
	expect(t, Config{Files: []string{"/u.yaml", "/p/.nexus/nexus.yaml"}}.Run(context.Background()), StatusOK, "loaded /u.yaml, /p/.nexus/nexus.yaml")
	expect(t, Config{}.Run(context.Background()), StatusOK, "no configuration files")
}

func TestStateFilesHistory(t *testing.T) {
	l := layout(t)
	store := state.New(l, schema.NewCoreSet(testenv.CoreDir(t)))
	write(t, l.HistoryPath(), `{"cycles":[
		{"schema_version":"1.0","owner":{"a":1}},
		{"schema_version":"0.5","completed_at":"2026-01-01T00:00:00Z","branch":"main","plan":null,"tasks":[],"later_field":1},
		{"schema_version":"0.5","completed_at":"yesterday","branch":"main","plan":null,"tasks":[]},
		7
	]}`)
	fs := StateFiles{Store: store}.Run(context.Background())
	expect(t, fs, StatusWarn, "/cycles/2/completed_at")
	expect(t, fs, StatusWarn, "cycle 3 is not an object")
	if s := summary(fs); strings.Contains(s, "/cycles/0") || strings.Contains(s, "/cycles/1") || strings.Contains(s, "error") {
		t.Errorf("legacy cycles and added members must pass:\n%s", s)
	}
	for _, f := range fs {
		if f.Fixable {
			t.Errorf("history is append-only; no fix: %+v", f)
		}
	}
	// Without a distribution only JSON syntax is checked.
	write(t, l.HistoryPath(), `{"cycles":[{"schema_version":"0.5","completed_at":"yesterday"}]}`)
	fs = StateFiles{Store: state.New(l, nil)}.Run(context.Background())
	expect(t, fs, StatusOK, "valid JSON (schemas not checked: no distribution)")
}

func TestNamespacesLegacyTracker(t *testing.T) {
	l := layout(t)
	write(t, l.LegacyTrackerPath(), "[]")
	write(t, filepath.Join(l.StateDir(), "opencode-nexus", "plan.json"), "{broken")
	if err := os.MkdirAll(l.ArtifactsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Namespaces{Layout: l}
	fs := c.Run(context.Background())
	expect(t, fs, StatusWarn, "other harnesses share "+l.StateDir()+": opencode-nexus (changed")
	expect(t, fs, StatusWarn, "pre-0.7 tracker")
	rep := Run(context.Background(), []Check{c}, true)
	if len(rep.Fixed) != 1 || state.Exists(l.LegacyTrackerPath()) || rep.Warnings != 1 {
		t.Errorf("fix: %+v", rep)
	}
}

// The namespaces of nexus's own sessions with other hosts are nexus's, not
// a co-running harness's.
func TestNamespacesOwnHosts(t *testing.T) {
	l := layout(t)
	for _, ns := range []string{"codex", "opencode-nexus"} {
		if err := os.MkdirAll(filepath.Join(l.StateDir(), ns), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs := Namespaces{Layout: l, Own: map[string]string{"codex": "codex"}}.Run(context.Background())
	expect(t, fs, StatusOK, "also holds codex (nexus's sessions with --host codex)")
	expect(t, fs, StatusWarn, "other harnesses share "+l.StateDir()+": opencode-nexus (changed")
	for _, f := range fs {
		if f.Status == StatusWarn && strings.Contains(f.Message, "codex (") {
			t.Errorf("nexus's own namespace reported as another harness: %s", f.Message)
		}
	}
}

func TestPlugins(t *testing.T) {
	const script = "#!/bin/sh\n"
	sum := sha256.Sum256([]byte(script))
	digest := hex.EncodeToString(sum[:])
	manifest := func(name, exe, sha string) string {
		return fmt.Sprintf("name: %s\nversion: \"1.0.0\"\nprotocol_version: 2\nexecutable: %s\nsha256: %q\nevents:\n  session_start:\n    timeout: 1s\n    on_failure: fail-open\n", name, exe, sha)
	}
	cases := []struct {
		name     string
		setup    func(t *testing.T, plugins string)
		disabled []string
		status   Status
		text     string
	}{
		{"none", func(*testing.T, string) {}, nil, StatusOK, "no plugins installed; built in: store"},
		{"digest matches", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a", "nexus-plugin.yaml"), manifest("a", "run", digest))
			write(t, filepath.Join(dir, "a", "run"), script)
		}, nil, StatusOK, "1 plugin, digests match: a"},
		{"disabled plugins are not checked", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a", "nexus-plugin.yaml"), manifest("a", "gone", digest))
		}, []string{"a"}, StatusOK, "no plugins installed; built in: store; plugins.disabled: a"},
		{"wrong digest", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a", "nexus-plugin.yaml"), manifest("a", "run", strings.Repeat("0", 64)))
			write(t, filepath.Join(dir, "a", "run"), script)
		}, nil, StatusError, "has sha256 " + digest + " but"},
		{"missing executable", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a", "nexus-plugin.yaml"), manifest("a", "gone", digest))
		}, nil, StatusError, "plugin a ("},
		{"a project plugin shadowed by a built-in one", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "store", "nexus-plugin.yaml"), manifest("store", "run", digest))
			write(t, filepath.Join(dir, "store", "run"), script)
		}, nil, StatusError, `"store"`},
		{"invalid manifest", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a", "nexus-plugin.yaml"), "name: A!\n")
		}, nil, StatusError, "invalid plugin manifest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj := t.TempDir()
			c.setup(t, filepath.Join(proj, ".nexus", "plugins"))
			builtin := &pluginhost.Manifest{Name: "store", Version: "1.0.0", ProtocolVersion: 2, Executable: "/bin/true", Source: pluginhost.SourceBuiltin,
				Tools: []pluginhost.ToolDecl{{Name: "get", CapabilityClasses: []string{}}}}
			fs := Plugins{Options: pluginhost.Options{ProjectDir: proj, NoUserPlugins: true, Disabled: c.disabled, Builtin: []*pluginhost.Manifest{builtin}}}.Run(context.Background())
			expect(t, fs, c.status, c.text)
			for _, f := range fs {
				if f.Fixable {
					t.Errorf("plugin problems are never fixed automatically: %+v", f)
				}
			}
		})
	}
}
