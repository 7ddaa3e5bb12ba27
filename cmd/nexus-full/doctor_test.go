package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/nexus-harness/nexus/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/filelock"
)

// doctorProject is a project with everything nexus needs, in a scratch
// home: the shared distribution, valid state files, a plugin whose digest
// matches, and the Claude Code integration installed for the built binary.
type doctorProject struct {
	bin, home, proj, nexus, state string
	env                           []string
}

const pluginScript = "#!/bin/sh\nexit 0\n"

func newDoctorProject(t testing.TB, bin string) *doctorProject {
	t.Helper()
	resolve := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	p := &doctorProject{bin: bin, home: resolve(t.TempDir()), proj: resolve(t.TempDir())}
	p.nexus = filepath.Join(p.proj, ".nexus")
	p.state = filepath.Join(p.nexus, "state")
	p.env = hookEnv(t, p.home)
	now := time.Now().UTC().Format(time.RFC3339)
	for name, content := range map[string]string{
		".nexus/.gitignore":                      "state/\n",
		".nexus/state/plan.json":                 `{"id":1,"topic":"doctor","issues":[{"id":1,"title":"one","status":"pending"}],"created_at":"` + now + `"}`,
		".nexus/state/tasks.json":                `{"goal":"ship","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"pending","deps":[],"created_at":"` + now + `"}]}`,
		".nexus/history.json":                    `{"cycles":[{"schema_version":"0.5","completed_at":"2026-01-02T00:00:00Z","branch":"main","plan":null,"tasks":[]},{"completed_at":"2024-01-01T00:00:00Z","owner":{"name":"legacy"}}]}`,
		".nexus/state/nexus/agent-tracker.json":  `[{"harness_id":"nexus","agent_name":"engineer","agent_id":"a1","started_at":"` + now + `","resume_count":0,"status":"running"}]`,
		".nexus/state/nexus/memory-access.jsonl": `{"path":"pattern-x.md","last_accessed_ts":"` + now + `","access_count":2,"last_agent":"lead"}` + "\n",
		".nexus/plugins/demo/bin/demo":           pluginScript,
		".nexus/plugins/demo/nexus-plugin.yaml":  "name: demo\nversion: \"1.0.0\"\nprotocol_version: 2\nexecutable: bin/demo\nsha256: \"" + sha256Hex(pluginScript) + "\"\nevents:\n  session_start:\n    timeout: 1s\n    on_failure: fail-open\n",
	} {
		writeDoctorFile(t, filepath.Join(p.proj, name), content)
	}
	if err := os.Chmod(filepath.Join(p.proj, ".nexus/plugins/demo/bin/demo"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A lock file left on disk by an earlier writer is normal (and free).
	writeDoctorFile(t, filepath.Join(p.state, "plan.json.lock"), "")
	if r := p.run(t, "install", "claude"); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	return p
}

// TestDoctor runs the built binary (one build for every case).
func TestDoctor(t *testing.T) {
	// With the plugin host beside it, as an installation has it: the
	// "nauro" entry install registers needs it.
	bin := buildNexus(t, t.TempDir())
	t.Run("healthy project", func(t *testing.T) { testDoctorHealthyProject(t, bin) })
	t.Run("nauro entry", func(t *testing.T) { testDoctorProbesNauro(t, bin) })
	t.Run("names each problem", func(t *testing.T) { testDoctorNamesEachProblem(t, bin) })
	t.Run("text and fix", func(t *testing.T) { testDoctorTextFix(t, bin) })
}

// writeDoctorFile is writeTestFile for benchmarks too.
func writeDoctorFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func (p *doctorProject) run(t testing.TB, args ...string) hookResult {
	t.Helper()
	out, errOut, code := runNexus(t, p.bin, p.proj, p.env, "", args...)
	return hookResult{out, errOut, code}
}

type doctorJSON struct {
	Healthy  bool `json:"healthy"`
	Errors   int  `json:"errors"`
	Warnings int  `json:"warnings"`
	Checks   []struct {
		Check    string `json:"check"`
		Findings []struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Fix     string `json:"fix"`
			Fixable bool   `json:"fixable"`
		} `json:"findings"`
	} `json:"checks"`
	Fixed []struct {
		Check, Did, Error string
	} `json:"fixed"`
}

func (p *doctorProject) doctor(t *testing.T, args ...string) (doctorJSON, int) {
	t.Helper()
	r := p.run(t, append([]string{"doctor", "--json"}, args...)...)
	var rep doctorJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json output: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return rep, r.code
}

// problems lists "check/status: message" for every finding that is not ok.
func (r doctorJSON) problems() []string {
	var out []string
	for _, c := range r.Checks {
		for _, f := range c.Findings {
			if f.Status != "ok" {
				out = append(out, fmt.Sprintf("%s/%s: %s", c.Check, f.Status, f.Message))
			}
		}
	}
	return out
}

func testDoctorHealthyProject(t *testing.T, bin string) {
	p := newDoctorProject(t, bin)
	r := p.run(t, "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "healthy: all 23 findings ok (21 checks)") {
		t.Fatalf("exit %d\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The verdict counts the lines above it.
	if lines := strings.Count(r.stdout, "\n  ok "); lines != 23 {
		t.Errorf("%d finding lines, the verdict says 23:\n%s", lines, r.stdout)
	}
	for _, want := range []string{
		"nexus-core 0.10.0", "plan.json, tasks.json, history.json, agent-tracker.json, memory-access.jsonl (1 line) match their schemas",
		"1 plugin, digests match: demo", "hooks for 8 events and the MCP servers \"nexus\" and \"nauro\" run this nexus",
		"reached the engine and was denied", "answered initialize",
		`the "nauro" MCP server`, "lists check_decision among",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("healthy output lacks %q:\n%s", want, r.stdout)
		}
	}
	// Each probe names the file its command is registered in: the hook
	// the settings, the MCP servers .mcp.json.
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "claude-mcp") && !strings.Contains(line, filepath.Join(".mcp.json")+",") ||
			strings.Contains(line, "claude-hook") && !strings.Contains(line, filepath.Join(".claude", "settings.json")+",") {
			t.Errorf("a probe names the wrong file: %s", line)
		}
	}
	t.Logf("\n%s", r.stdout)
	// --fix on a healthy project does nothing.
	rep, code := p.doctor(t, "--fix")
	if code != 0 || !rep.Healthy || len(rep.Fixed) != 0 || len(rep.problems()) != 0 {
		t.Errorf("--fix on a healthy project: exit %d, fixed %+v, problems %q", code, rep.Fixed, rep.problems())
	}
	// The scratch projects of the probes are gone and the project's own
	// state was not touched by them.
	if _, err := os.Stat(filepath.Join(p.state, "nexus", "tool-log.jsonl")); err == nil {
		t.Errorf("the canary wrote the project's tool log")
	}
}

// The "nauro" entry install registers beside "nexus" (the decision store
// served on its own) is probed as Claude Code runs it: initialize, then
// tools/list must offer check_decision.
func testDoctorProbesNauro(t *testing.T, bin string) {
	setMCPEnv := func(t *testing.T, p *doctorProject, server string, env map[string]any) {
		f := filepath.Join(p.proj, ".mcp.json")
		var m map[string]any
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["mcpServers"].(map[string]any)[server].(map[string]any)["env"] = env
		b, _ = json.Marshal(m)
		writeTestFile(t, f, string(b))
	}
	cases := []struct {
		name  string
		bin   func(t *testing.T) string
		setup func(t *testing.T, p *doctorProject)
		// want: texts the claude-mcp findings contain; bad: whether one of
		// them is an error (and the doctor exits 1).
		want []string
		bad  bool
	}{
		{
			name: "plugin host missing",
			bin:  func(t *testing.T) string { return nexusAlone(t) },
			want: []string{`the "nauro" MCP server`, "lists no check_decision tool", "nexus-plugins is not installed", "plugin host nexus-plugins installed beside nexus"},
			bad:  true,
		},
		{
			name: "store turned off in the entry's own env",
			setup: func(t *testing.T, p *doctorProject) {
				setMCPEnv(t, p, "nauro", map[string]any{"NEXUS_DECISIONS_ENABLED": "false"})
			},
			want: []string{`the "nauro" MCP server`, "decision store is turned off"},
			bad:  true,
		},
		{
			// The nexus entry's env does not reach the nauro entry.
			name: "env of the nexus entry only",
			setup: func(t *testing.T, p *doctorProject) {
				setMCPEnv(t, p, "nexus", map[string]any{"NEXUS_DECISIONS_ENABLED": "false"})
			},
			want: []string{"`nexus mcp` answered initialize", `the "nauro" MCP server`, "lists check_decision among"},
		},
		{
			name: "store off: no nauro entry, no nauro probe",
			setup: func(t *testing.T, p *doctorProject) {
				writeTestFile(t, filepath.Join(p.nexus, "nexus.yaml"), "decisions:\n  enabled: false\n")
				if r := p.run(t, "install", "claude"); r.code != 0 {
					t.Fatal(r.stderr)
				}
			},
			want: []string{"`nexus mcp` answered initialize"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := bin
			if c.bin != nil {
				b = c.bin(t)
			}
			p := newDoctorProject(t, b)
			if c.setup != nil {
				c.setup(t, p)
			}
			rep, code := p.doctor(t)
			var msgs []string
			failed := false
			for _, ch := range rep.Checks {
				if ch.Check != "claude-mcp" {
					continue
				}
				for _, f := range ch.Findings {
					msgs = append(msgs, f.Message+" | "+f.Fix)
					failed = failed || f.Status == "error"
				}
			}
			all := strings.Join(msgs, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("claude-mcp findings lack %q:\n%s", w, all)
				}
			}
			if c.bad != failed || (code == 1) != c.bad {
				t.Errorf("error %v (exit %d), want %v:\n%s\nall problems: %q", failed, code, c.bad, all, rep.problems())
			}
			if !c.bad && len(c.want) == 1 && strings.Contains(all, `"nauro" MCP server`) {
				t.Errorf("a nauro probe ran without a nauro entry:\n%s", all)
			}
			for _, pr := range rep.problems() {
				if !strings.HasPrefix(pr, "claude-mcp/") {
					t.Errorf("unexpected finding %s", pr)
				}
			}
		})
	}
}

// Each broken thing is named by its check (and nothing else is reported);
// --fix repairs what is safe, and the run after it is clean.
func testDoctorNamesEachProblem(t *testing.T, bin string) {
	type tc struct {
		name  string
		brk   func(t *testing.T, p *doctorProject) (cleanup func())
		want  map[string]string // check → text its non-ok finding contains
		code  int
		fixed bool // --fix repairs it
		after func(t *testing.T, p *doctorProject)
	}
	daysAgo := func(t *testing.T, d int, paths ...string) {
		old := time.Now().Add(-time.Duration(d) * 24 * time.Hour)
		for _, path := range paths {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []tc{
		{
			name: "corrupt plan.json",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.state, "plan.json"), `{"id":1,"topic":`)
				return nil
			},
			want: map[string]string{"state": "plan.json is corrupt: not valid JSON"}, code: 1, fixed: true,
			after: func(t *testing.T, p *doctorProject) {
				m, _ := filepath.Glob(filepath.Join(p.state, "plan.json.corrupt-*"))
				if len(m) != 1 {
					t.Errorf("plan.json was not moved aside: %v", m)
				}
			},
		},
		{
			name: "schema-invalid tasks.json",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.state, "tasks.json"), `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"finished","deps":[]}]}`)
				return nil
			},
			want: map[string]string{"state": "tasks.json is corrupt: does not match its schema: /tasks/0/status"}, code: 1, fixed: true,
		},
		{
			name: "invalid memory-access line",
			brk: func(t *testing.T, p *doctorProject) func() {
				f := filepath.Join(p.state, "nexus", "memory-access.jsonl")
				b, _ := os.ReadFile(f)
				writeTestFile(t, f, string(b)+`{"path":"b.md","last_accessed_ts":"yesterday","access_count":1,"last_agent":"lead"}`+"\nnot json\n")
				return nil
			},
			want: map[string]string{"state": "2 of 3 lines do not match memory-access.schema.json"}, code: 0, fixed: true,
		},
		{
			name: "stale plan and tracker",
			brk: func(t *testing.T, p *doctorProject) func() {
				daysAgo(t, 3, filepath.Join(p.state, "plan.json"), filepath.Join(p.state, "tasks.json"), filepath.Join(p.state, "nexus", "agent-tracker.json"))
				return nil
			},
			want: map[string]string{"session": "no session has touched .nexus/state for 3d"}, code: 0,
		},
		{
			name: "foreign namespace",
			brk: func(t *testing.T, p *doctorProject) func() {
				// Its content is never read: a corrupt file inside goes unnoticed.
				writeTestFile(t, filepath.Join(p.state, "claude-nexus", "agent-tracker.json"), "{corrupt")
				return nil
			},
			want: map[string]string{"namespaces": "other harnesses share " + "%STATE%: claude-nexus"}, code: 0,
		},
		{
			name: "held lock",
			brk: func(t *testing.T, p *doctorProject) func() {
				l, err := filelock.AcquirePath(context.Background(), filepath.Join(p.state, "tasks.json.lock"), time.Second)
				if err != nil {
					t.Fatal(err)
				}
				return func() { l.Release() }
			},
			want: map[string]string{"locks": fmt.Sprintf("tasks.json.lock has been held for over 500ms by pid %d", os.Getpid())}, code: 0,
		},
		{
			name: "leftover temporary file",
			brk: func(t *testing.T, p *doctorProject) func() {
				old := filepath.Join(p.state, ".plan.json.tmp-1234567")
				writeTestFile(t, old, "{")
				daysAgo(t, 1, old)
				// A fresh one belongs to a write in flight: left alone.
				writeTestFile(t, filepath.Join(p.nexus, "memory", ".x.md.tmp-42"), "x")
				return nil
			},
			want: map[string]string{"locks": "1 temporary file left by writers that were killed: " + "%STATE%/.plan.json.tmp-1234567"}, code: 0, fixed: true,
			after: func(t *testing.T, p *doctorProject) {
				if _, err := os.Stat(filepath.Join(p.state, ".plan.json.tmp-1234567")); err == nil {
					t.Error("old temporary file not removed")
				}
				if _, err := os.Stat(filepath.Join(p.nexus, "memory", ".x.md.tmp-42")); err != nil {
					t.Error("fresh temporary file removed")
				}
			},
		},
		{
			name: "plugin with a wrong digest",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.nexus, "plugins", "demo", "bin", "demo"), pluginScript+"# changed\n")
				return nil
			},
			want: map[string]string{"plugins": "plugin demo refused: " + "%NEXUS%/plugins/demo/bin/demo has sha256 " + sha256Hex(pluginScript+"# changed\n")}, code: 1,
		},
		{
			name: "missing hook entries",
			brk: func(t *testing.T, p *doctorProject) func() {
				f := filepath.Join(p.proj, ".claude", "settings.json")
				var m map[string]any
				b, _ := os.ReadFile(f)
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				hooks := m["hooks"].(map[string]any)
				delete(hooks, "PreToolUse")
				delete(hooks, "SessionEnd")
				b, _ = json.Marshal(m)
				writeTestFile(t, f, string(b))
				return nil
			},
			want: map[string]string{"claude-install": "has no nexus hook for PreToolUse, SessionEnd"}, code: 1, fixed: true,
		},
		{
			// The commands name a distribution that is gone: the real session
			// would fail, so the probes, which run those commands, must too.
			name: "registered commands name a distribution that is gone",
			brk: func(t *testing.T, p *doctorProject) func() {
				for _, f := range []string{filepath.Join(p.proj, ".claude", "settings.json"), filepath.Join(p.proj, ".mcp.json")} {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					writeTestFile(t, f, strings.ReplaceAll(string(b), testenv.CoreDir(t), "/nonexistent/nexus-core"))
				}
				return nil
			},
			want: map[string]string{"claude-hook": "/nonexistent/nexus-core", "claude-mcp": "/nonexistent/nexus-core"}, code: 1,
		},
		{
			name: "hooks and MCP server run another binary",
			brk: func(t *testing.T, p *doctorProject) func() {
				if r := p.run(t, "install", "claude", "--command", "/opt/gone/nexus"); r.code != 0 {
					t.Fatal(r.stderr)
				}
				return nil
			},
			// The probes never start a program a project's settings register
			// unless it is this nexus (a cloned repository can register any):
			// they probe this executable, and claude-install names the other
			// one. The setup skill names the executable, so it is out of date too.
			want: map[string]string{"claude-install": "run /opt/gone/nexus, which does not exist", "claude-agents": "skills/nx-setup/SKILL.md was written from another nexus"}, code: 1, fixed: true,
		},
		{
			name: "bad .gitignore",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.nexus, ".gitignore"), "*.tmp")
				return nil
			},
			want: map[string]string{"gitignore": "does not ignore state/"}, code: 1, fixed: true,
			after: func(t *testing.T, p *doctorProject) {
				b, _ := os.ReadFile(filepath.Join(p.nexus, ".gitignore"))
				if string(b) != "*.tmp\nstate/\n" {
					t.Errorf(".gitignore after --fix: %q", b)
				}
			},
		},
		{
			name: "missing .gitignore",
			brk: func(t *testing.T, p *doctorProject) func() {
				os.Remove(filepath.Join(p.nexus, ".gitignore"))
				return nil
			},
			want: map[string]string{"gitignore": ".gitignore is missing"}, code: 0, fixed: true,
		},
		{
			// A typo is a warning: the key keeps its default.
			name: "config typo",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.nexus, "nexus.yaml"), "gate:\n  polcy: fail-closed\n")
				return nil
			},
			want: map[string]string{"config": `gate.polcy: unknown configuration key (did you mean "gate.policy"?); ` + "`nexus config keys`" + ` lists the valid keys; so it is ignored: gate.policy stays fail-open (the default)`}, code: 0,
		},
		{
			// A file that cannot be parsed is left out whole: exit 3.
			name: "config unparseable",
			brk: func(t *testing.T, p *doctorProject) func() {
				writeTestFile(t, filepath.Join(p.nexus, "nexus.yaml"), "gate: [\n")
				return nil
			},
			want: map[string]string{"config": `nexus.yaml: invalid YAML`}, code: exitConfig,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newDoctorProject(t, bin)
			cleanup := c.brk(t, p)
			expand := func(s string) string {
				return strings.NewReplacer("%STATE%", p.state, "%NEXUS%", p.nexus).Replace(s)
			}
			assertNamed := func(rep doctorJSON, code int, when string) {
				t.Helper()
				if code != c.code {
					t.Errorf("%s: exit %d, want %d (%q)", when, code, c.code, rep.problems())
				}
				for check, want := range c.want {
					found := false
					for _, pr := range rep.problems() {
						found = found || (strings.HasPrefix(pr, check+"/") && strings.Contains(pr, expand(want)))
					}
					if !found {
						t.Errorf("%s: no %s finding containing %q in %q", when, check, expand(want), rep.problems())
					}
				}
				for _, pr := range rep.problems() {
					check, _, _ := strings.Cut(pr, "/")
					if _, ok := c.want[check]; !ok {
						t.Errorf("%s: unexpected finding %s", when, pr)
					}
				}
			}
			rep, code := p.doctor(t)
			assertNamed(rep, code, "first run")

			rep, code = p.doctor(t, "--fix")
			if cleanup != nil {
				cleanup()
			}
			if !c.fixed {
				assertNamed(rep, code, "after --fix (nothing safe to fix)")
				if len(rep.Fixed) != 0 {
					t.Errorf("--fix did %+v", rep.Fixed)
				}
				return
			}
			if len(rep.Fixed) == 0 || code != 0 || len(rep.problems()) != 0 {
				t.Errorf("--fix: exit %d, fixed %+v, left %q", code, rep.Fixed, rep.problems())
			}
			for _, a := range rep.Fixed {
				if _, ok := c.want[a.Check]; !ok || a.Error != "" || a.Did == "" {
					t.Errorf("--fix action %+v", a)
				}
			}
			rep, code = p.doctor(t)
			if code != 0 || !rep.Healthy || len(rep.problems()) != 0 {
				t.Errorf("run after --fix: exit %d, %q", code, rep.problems())
			}
			if c.after != nil {
				c.after(t, p)
			}
		})
	}
}

// The text output says what is wrong, how to fix it, and what --fix did.
func testDoctorTextFix(t *testing.T, bin string) {
	p := newDoctorProject(t, bin)
	writeTestFile(t, filepath.Join(p.state, "plan.json"), "garbage")
	r := p.run(t, "doctor")
	for _, want := range []string{
		"error  state", "plan.json is corrupt", "fix (--fix does this): move it aside",
		"not healthy: 1 error, 0 warnings; `nexus doctor --fix` can fix 1 of them",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("exit %d", r.code)
	}
	r = p.run(t, "doctor", "--fix")
	if r.code != 0 || !strings.Contains(r.stdout, "fixed: state: moved "+filepath.Join(p.state, "plan.json")+" aside to plan.json.corrupt-") ||
		!strings.Contains(r.stdout, "healthy") {
		t.Errorf("--fix: exit %d\n%s", r.code, r.stdout)
	}
}

// BenchmarkDoctorHealthy times one whole `nexus doctor` process on a
// healthy project (subprocess probes included).
func BenchmarkDoctorHealthy(b *testing.B) {
	p := newDoctorProject(b, buildNexus(b, b.TempDir()))
	for b.Loop() {
		if r := p.run(b, "doctor"); r.code != 0 {
			b.Fatalf("exit %d: %s", r.code, r.stdout)
		}
	}
}
