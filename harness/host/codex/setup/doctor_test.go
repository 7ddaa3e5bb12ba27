package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host/codex"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/internal/testenv"
)

var commands testenv.Commands

func TestMain(m *testing.M) {
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

func summary(fs []doctor.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s: %s\n", f.Status, f.Message)
	}
	return b.String()
}

func expect(t *testing.T, fs []doctor.Finding, status doctor.Status, text string) {
	t.Helper()
	for _, f := range fs {
		if f.Status == status && strings.Contains(f.Message, text) {
			return
		}
	}
	t.Errorf("no %s finding containing %q in:\n%s", status, text, summary(fs))
}

func (f *fixture) hostEnv(exe string) doctor.HostEnv {
	req := f.request(installpkg.ScopeProject)
	return doctor.HostEnv{Project: f.project, Home: f.home, Executable: exe, Version: "test", Install: req}
}

func run(c doctor.Check) []doctor.Finding { return c.Run(context.Background()) }

func TestDoctorRegistration(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "nexus")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	base := checkBase{env: f.hostEnv(exe), getenv: func(string) string { return "" }}

	expect(t, run(Registration{base}), doctor.StatusOK, "not registered with Codex")
	expect(t, run(Catalog{base, Host{}}), doctor.StatusOK, "not registered with Codex")

	req := f.request(installpkg.ScopeProject)
	req.Command = exe
	if _, err := (Host{}).Install(req); err != nil {
		t.Fatal(err)
	}
	fs := run(Registration{base})
	expect(t, fs, doctor.StatusError, "Codex skips nexus's hooks")
	expect(t, fs, doctor.StatusError, "is not trusted")
	for _, x := range fs {
		if x.Fixable && x.Status == doctor.StatusError {
			t.Errorf("doctor --fix would grant trust: %s", x.Message)
		}
	}
	expect(t, run(Catalog{base, Host{}}), doctor.StatusOK, "present and current")

	// Trusted hooks and a trusted project: all well.
	req.TrustHooks = true
	if _, err := (Host{}).Install(req); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(f.home, ".codex", "config.toml")
	b, _ := os.ReadFile(cfg)
	f.write(cfg, string(b)+fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", f.project))
	fs = run(Registration{base})
	if !doctor.AllOK(fs) {
		t.Errorf("trusted install:\n%s", summary(fs))
	}
	expect(t, fs, doctor.StatusOK, "trusted, and the MCP server run this nexus")

	// A hook edited after it was reviewed is no longer trusted.
	hooks := filepath.Join(f.project, ".codex", "hooks.json")
	h, _ := os.ReadFile(hooks)
	f.write(hooks, strings.Replace(string(h), `"timeout": 30`, `"timeout": 31`, 1))
	expect(t, run(Registration{base}), doctor.StatusError, "changed since they were reviewed")

	// Missing hooks are restored by --fix, as they were: the trust recorded
	// for them holds again.
	f.write(hooks, string(h))
	data, _ := os.ReadFile(hooks)
	edited, err := codex.EditHooks(data, exe, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Remove {
		os.Remove(hooks)
	} else {
		f.write(hooks, string(edited.Data))
	}
	rep := doctor.Run(context.Background(), []doctor.Check{Registration{base}}, true)
	if len(rep.Fixed) == 0 || rep.Fixed[0].Error != "" {
		t.Fatalf("--fix: %+v", rep.Fixed)
	}
	if !doctor.AllOK(rep.Checks[0].Findings) {
		t.Errorf("after --fix:\n%s", summary(rep.Checks[0].Findings))
	}

	// An agent file edited by the user is reported, not overwritten.
	agent := filepath.Join(f.project, ".codex", AgentPath("writer"))
	f.write(agent, f.read(agent)+"# mine\n")
	expect(t, run(Catalog{base, Host{}}), doctor.StatusWarn, "was edited after nexus wrote it")
}

// The probes run the registered command lines, as Codex would: the hook
// through /bin/bash -c with this environment, the MCP server with only
// HOME, LANG and PATH.
func TestDoctorProbes(t *testing.T) {
	exe := commands.Path(t, "./cmd/nexus")
	f := newFixture(t)
	base := checkBase{env: f.hostEnv(exe), getenv: func(string) string { return "" }}
	// Not registered: this nexus.
	expect(t, run(HookCanary{base}), doctor.StatusOK, "denied as an unplanned edit")
	expect(t, run(MCPProbe{base}), doctor.StatusOK, "`nexus mcp --host codex` answered initialize")

	req := f.request(installpkg.ScopeProject)
	req.Command, req.Decisions = exe, false
	if _, err := (Host{}).Install(req); err != nil {
		t.Fatal(err)
	}
	expect(t, run(HookCanary{base}), doctor.StatusOK, "the command registered in "+filepath.Join(f.project, ".codex", "hooks.json"))
	expect(t, run(MCPProbe{base}), doctor.StatusOK, `the "nexus" MCP server in `+filepath.Join(f.project, ".codex", "config.toml"))

	// A registered command that cannot run fails both probes.
	broken := filepath.Join(t.TempDir(), "nexus")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho broken >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	req.Command = broken
	if _, err := (Host{}).Install(req); err != nil {
		t.Fatal(err)
	}
	expect(t, run(HookCanary{base}), doctor.StatusError, "broken")
	expect(t, run(MCPProbe{base}), doctor.StatusError, `the "nexus" MCP server`)
}
