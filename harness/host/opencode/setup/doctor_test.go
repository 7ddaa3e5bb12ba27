package setup_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host/opencode/setup"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

// commands holds nexus and nexus-plugins, built once for the doctor's
// probes, side by side as an installation has them.
var commands testenv.Commands

// doctorEnv is a project and home with the OpenCode checks' environment for
// the built nexus.
type doctorEnv struct {
	req      installpkg.Request
	env      doctor.HostEnv
	proj     string
	home     string
	nexusBin string
}

func newDoctorEnv(t *testing.T) *doctorEnv {
	t.Helper()
	bin := commands.Path(t, "./cmd/nexus")
	commands.Path(t, "./cmd/nexus-plugins")
	req, proj, home := installReq(t, installpkg.ScopeProject)
	req.Command = bin
	env := doctor.HostEnv{Project: proj, Home: home, Executable: bin, Version: "test", Install: req}
	env.Install.Command = ""
	return &doctorEnv{req: req, env: env, proj: proj, home: home, nexusBin: bin}
}

func (d *doctorEnv) install(t *testing.T, scope string) {
	t.Helper()
	r := d.req
	r.Scope = scope
	if _, err := (setup.Host{}).Install(r); err != nil {
		t.Fatal(err)
	}
}

// run runs every OpenCode check (fix: with the repairs) and returns the
// findings by check.
func (d *doctorEnv) run(t *testing.T, fix bool) (map[string][]doctor.Finding, *doctor.Report) {
	t.Helper()
	rep := doctor.Run(context.Background(), setup.Host{}.DoctorChecks(d.env), fix)
	out := map[string][]doctor.Finding{}
	for _, c := range rep.Checks {
		out[c.Check] = c.Findings
	}
	return out, rep
}

func summary(by map[string][]doctor.Finding) string {
	var b strings.Builder
	for check, fs := range by {
		for _, f := range fs {
			fmt.Fprintf(&b, "%s/%s: %s\n", check, f.Status, f.Message)
		}
	}
	return b.String()
}

func expect(t *testing.T, by map[string][]doctor.Finding, check string, status doctor.Status, text string) {
	t.Helper()
	for _, f := range by[check] {
		if f.Status == status && strings.Contains(f.Message, text) {
			return
		}
	}
	t.Errorf("no %s %s finding containing %q in:\n%s", check, status, text, summary(by))
}

func healthy(t *testing.T, by map[string][]doctor.Finding) {
	t.Helper()
	for check, fs := range by {
		for _, f := range fs {
			if f.Status != doctor.StatusOK {
				t.Errorf("%s/%s: %s (fix: %s)", check, f.Status, f.Message, f.Fix)
			}
		}
	}
}

// TestDoctorHealthy: not installed, the probes run this nexus and pass;
// installed in the project, every check passes through what install
// wrote: the plugin's two command lines answer the canary, the nexus and
// nauro servers answer initialize.
func TestDoctorHealthy(t *testing.T) {
	d := newDoctorEnv(t)
	by, _ := d.run(t, false)
	healthy(t, by)
	expect(t, by, "opencode-install", doctor.StatusOK, "not registered with OpenCode")
	expect(t, by, "opencode-hook", doctor.StatusOK, "long-lived `nexus hook --host opencode --serve` reached the engine")
	d.install(t, installpkg.ScopeProject)
	by, _ = d.run(t, false)
	healthy(t, by)
	expect(t, by, "opencode-install", doctor.StatusOK, "the plugin (protocol 1) and the MCP server run this nexus")
	expect(t, by, "opencode-agents", doctor.StatusOK, "the plugin and 13 agent and skill files")
	expect(t, by, "opencode-hook", doctor.StatusOK, "the command lines of "+filepath.Join(d.proj, ".opencode", "plugins", "nexus.js"))
	expect(t, by, "opencode-hook", doctor.StatusOK, "one process per hook (its fallback) was refused as an unplanned edit")
	expect(t, by, "opencode-mcp", doctor.StatusOK, `the "nauro" MCP server in `+filepath.Join(d.proj, "opencode.json")+" answered initialize")
}

// TestDoctorFindsAndFixes: each break is named, and --fix repairs what
// install can.
func TestDoctorFindsAndFixes(t *testing.T) {
	plugin := func(d *doctorEnv) string { return filepath.Join(d.proj, ".opencode", "plugins", "nexus.js") }
	edit := func(t *testing.T, path, old, new string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("%s lacks %q", path, old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name          string
		brk           func(t *testing.T, d *doctorEnv)
		check, status string
		text          string
		fixed         bool
	}{
		{"plugin missing", func(t *testing.T, d *doctorEnv) { os.Remove(plugin(d)) }, "opencode-install", "error", "nexus.js is missing", true},
		{"plugin of another protocol, written by nexus", func(t *testing.T, d *doctorEnv) {
			edit(t, plugin(d), "const V = 1", "const V = 0")
			rerecord(t, d, plugin(d))
		}, "opencode-install", "error", "speaks protocol 0", true},
		{"plugin of another protocol, edited", func(t *testing.T, d *doctorEnv) { edit(t, plugin(d), "const V = 1", "const V = 0") }, "opencode-install", "error", "speaks protocol 0", false},
		{"plugin and server running a nexus that is gone", func(t *testing.T, d *doctorEnv) {
			r := d.req
			r.Command = "/opt/gone/nexus"
			if _, err := (setup.Host{}).Install(r); err != nil {
				t.Fatal(err)
			}
		}, "opencode-install", "error", "runs /opt/gone/nexus, which does not exist", true},
		{"no MCP entry", func(t *testing.T, d *doctorEnv) { os.Remove(filepath.Join(d.proj, "opencode.json")) }, "opencode-install", "error", `registers no "nexus" MCP server`, true},
		{"MCP entry of another tool", func(t *testing.T, d *doctorEnv) {
			writeTestFile(t, filepath.Join(d.proj, "opencode.json"), `{"mcp": {"nexus": {"type": "local", "command": ["node", "x.js"]}}}`)
		}, "opencode-install", "error", "runs node x.js, not nexus", false},
		{"an agent edited", func(t *testing.T, d *doctorEnv) {
			writeTestFile(t, filepath.Join(d.proj, ".opencode", "agents", "architect.md"), "mine\n")
		}, "opencode-agents", "warn", "agents/architect.md was edited after nexus wrote it", false},
		{"a skill missing", func(t *testing.T, d *doctorEnv) {
			os.Remove(filepath.Join(d.proj, ".opencode", "skills", "nx-run", "SKILL.md"))
		}, "opencode-agents", "error", "lacks skills/nx-run/SKILL.md", true},
		{"both scopes", func(t *testing.T, d *doctorEnv) { d.install(t, installpkg.ScopeUser) }, "opencode-install", "warn", "installed in both the project and the user scope", false},
		{"config file unreadable", func(t *testing.T, d *doctorEnv) {
			writeTestFile(t, filepath.Join(d.proj, "opencode.json"), `{"mcp": `)
		}, "opencode-install", "error", "OpenCode skips a config file it cannot parse", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDoctorEnv(t)
			d.install(t, installpkg.ScopeProject)
			tt.brk(t, d)
			by, _ := d.run(t, false)
			expect(t, by, tt.check, doctor.Status(tt.status), tt.text)
			if !tt.fixed {
				return
			}
			if _, rep := d.run(t, true); len(rep.Fixed) == 0 {
				t.Error("--fix did nothing")
			}
			by, _ = d.run(t, false)
			healthy(t, by)
		})
	}
}

// TestDoctorRunsNoProjectProgram: a cloned repository's plugin file and MCP
// entry naming another program (in nexus's shape) are reported, never run:
// the probes run this nexus instead.
func TestDoctorRunsNoProjectProgram(t *testing.T) {
	d := newDoctorEnv(t)
	d.install(t, installpkg.ScopeProject)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := filepath.Join(t.TempDir(), "nexus")
	writeTestFile(t, evil, "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(d.proj, ".opencode", "plugins", "nexus.js"), filepath.Join(d.proj, "opencode.json")} {
		b, _ := os.ReadFile(f)
		writeTestFile(t, f, strings.ReplaceAll(string(b), d.nexusBin, evil))
	}
	by, _ := d.run(t, false)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the doctor ran the program the project's files name")
	}
	expect(t, by, "opencode-install", doctor.StatusWarn, "runs "+evil+", not this nexus")
	expect(t, by, "opencode-hook", doctor.StatusOK, "reached the engine")
	expect(t, by, "opencode-mcp", doctor.StatusOK, "`nexus mcp --host opencode` answered initialize")
}

// rerecord records a file's current content in the install record, as if
// an earlier nexus had written it.
func rerecord(t *testing.T, d *doctorEnv, path string) {
	t.Helper()
	dir := filepath.Join(d.proj, ".opencode")
	rel, _ := filepath.Rel(dir, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	recPath := filepath.Join(dir, installpkg.RecordName)
	var rec installpkg.Record
	rb, _ := os.ReadFile(recPath)
	if err := json.Unmarshal(rb, &rec); err != nil {
		t.Fatal(err)
	}
	for i := range rec.Files {
		if rec.Files[i].Path == filepath.ToSlash(rel) {
			rec.Files[i].SHA256 = hex.EncodeToString(sum[:])
		}
	}
	rb, _ = json.MarshalIndent(rec, "", "  ")
	writeTestFile(t, recPath, string(rb)+"\n")
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
