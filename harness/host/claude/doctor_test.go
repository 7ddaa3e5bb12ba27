package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/install"
)

// Claude Code's doctor checks.

// summary renders findings as "status: message" lines.
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

func TestClaudeInstall(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, exe, "#!/bin/sh\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, other, "#!/bin/sh\n")
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	install := func(t *testing.T, scope, proj, home, command string) {
		t.Helper()
		if _, err := Install(InstallOptions{Scope: scope, Project: proj, Home: home, Command: command}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, proj, home string)
		status doctor.Status
		text   string
		fixes  bool
	}{
		{"not installed", func(*testing.T, string, string) {}, doctor.StatusWarn, "nexus is not registered with Claude Code", false},
		{"installed", func(t *testing.T, proj, home string) { install(t, ScopeProject, proj, "", exe) }, doctor.StatusOK, "hooks for 8 events and the MCP server \"nexus\" run this nexus", false},
		{"another existing build", func(t *testing.T, proj, home string) { install(t, ScopeUser, "", home, other) }, doctor.StatusWarn, "run " + other + ", not this nexus", true},
		{"MCP server of another tool", func(t *testing.T, proj, home string) {
			install(t, ScopeProject, proj, "", exe)
			writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers":{"nexus":{"command":"node","args":["x.js"]}}}`)
		}, doctor.StatusError, `the MCP server "nexus" in ` + filepath.Join("%PROJ%", ".mcp.json") + " runs node x.js, not nexus", false},
		{"both scopes", func(t *testing.T, proj, home string) {
			install(t, ScopeProject, proj, "", exe)
			install(t, ScopeUser, "", home, exe)
		}, doctor.StatusWarn, "registered in both the project and the user scope", false},
		{"settings file is not JSON", func(t *testing.T, proj, home string) {
			writeFile(t, filepath.Join(home, ".claude", "settings.json"), "{")
		}, doctor.StatusError, "Claude Code cannot read it either", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj, home := t.TempDir(), t.TempDir()
			c.setup(t, proj, home)
			check := ClaudeInstall{Project: proj, Home: home, Executable: exe}
			fs := check.Run(context.Background())
			expect(t, fs, c.status, strings.ReplaceAll(c.text, "%PROJ%", proj))
			rep := doctor.Run(context.Background(), []doctor.Check{check}, true)
			if c.fixes && (len(rep.Fixed) == 0 || rep.Errors+rep.Warnings != 0) {
				t.Errorf("--fix: %+v", rep)
			}
			if !c.fixes && len(rep.Fixed) != 0 {
				t.Errorf("--fix must leave this alone: %+v", rep.Fixed)
			}
		})
	}
}

func TestClaudeCatalog(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, exe, "#!/bin/sh\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []install.OwnedFile{{Path: "agents/architect.md", Content: []byte("a\n")}, {Path: "skills/nx-plan/SKILL.md", Content: []byte("p\n")}}
	render := func() ([]install.OwnedFile, string, error) { return files, "0.10.0", nil }
	proj, home := t.TempDir(), t.TempDir()
	check := ClaudeCatalog{Project: proj, Home: home, Executable: exe, Render: render, Version: "1"}
	expect(t, check.Run(context.Background()), doctor.StatusOK, "not registered")

	// Registered without the agents (an install by an older nexus).
	if _, err := Install(InstallOptions{Scope: ScopeProject, Project: proj, Command: exe}); err != nil {
		t.Fatal(err)
	}
	expect(t, check.Run(context.Background()), doctor.StatusError, "cannot spawn a nexus role")
	rep := doctor.Run(context.Background(), []doctor.Check{check}, true)
	if len(rep.Fixed) == 0 || rep.Errors != 0 {
		t.Fatalf("--fix: %+v", rep)
	}
	expect(t, check.Run(context.Background()), doctor.StatusOK, "2 agent and skill files")

	// Outdated, edited, missing.
	files = []install.OwnedFile{{Path: "agents/architect.md", Content: []byte("a2\n")}, {Path: "skills/nx-plan/SKILL.md", Content: []byte("p\n")}, {Path: "agents/tester.md", Content: []byte("t\n")}}
	writeFile(t, filepath.Join(proj, ".claude", "skills", "nx-plan", "SKILL.md"), "mine\n")
	fs := check.Run(context.Background())
	expect(t, fs, doctor.StatusWarn, "agents/architect.md was written from another nexus or distribution version and is out of date")
	expect(t, fs, doctor.StatusWarn, "skills/nx-plan/SKILL.md was edited after nexus wrote it")
	expect(t, fs, doctor.StatusError, "lacks agents/tester.md")
	doctor.Run(context.Background(), []doctor.Check{check}, true)
	fs = check.Run(context.Background())
	expect(t, fs, doctor.StatusWarn, "edited after nexus wrote it")
	for _, f := range fs {
		if f.Status == doctor.StatusError || strings.Contains(f.Message, "another nexus") {
			t.Errorf("after --fix: %s", f.Message)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".claude", "skills", "nx-plan", "SKILL.md")); string(b) != "mine\n" {
		t.Error("--fix overwrote an edited file")
	}

	// A file of the user's own under a nexus name: one file reads in
	// the singular.
	files = append(files, install.OwnedFile{Path: "agents/reviewer.md", Content: []byte("r\n")})
	writeFile(t, filepath.Join(proj, ".claude", "agents", "reviewer.md"), "my reviewer\n")
	expect(t, check.Run(context.Background()), doctor.StatusWarn,
		"agents/reviewer.md exists but was not written by nexus, so the nexus role or skill of that name is not installed")
}

// A doctor --fix of the settings alone (ClaudeInstall) must keep the
// recorded agents and the registered --core.
func TestClaudeInstallFixKeepsAgentsAndCore(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, exe, "#!/bin/sh\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	files := []install.OwnedFile{{Path: "agents/architect.md", Content: []byte("a\n")}}
	if _, err := Install(InstallOptions{Scope: ScopeProject, Project: proj, Command: exe, CoreDir: "/srv/core", Files: files}); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(proj, ".claude", "settings.json")
	b, _ := os.ReadFile(settings)
	// Drop the SessionEnd hook, as a hand edit might.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["hooks"].(map[string]any), "SessionEnd")
	b, _ = json.Marshal(m)
	writeFile(t, settings, string(b))
	rep := doctor.Run(context.Background(), []doctor.Check{ClaudeInstall{Project: proj, Executable: exe}}, true)
	if len(rep.Fixed) == 0 {
		t.Fatalf("nothing fixed: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "agents", "architect.md")); err != nil {
		t.Error("the settings repair removed the agents")
	}
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), "--core /srv/core SessionEnd") {
		t.Errorf("the repair dropped --core:\n%s", b)
	}
}
