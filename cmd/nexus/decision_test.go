package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecisionRunsInThePluginHost: `nexus decision` is the store's command
// line run by nexus-plugins. What nexus owns stays nexus's (its flags, its
// configuration, the exit-code table); what the store's command line says
// (help, usage errors, results) comes through unchanged, exit status
// included. Without the plugin host it says so.
func TestDecisionRunsInThePluginHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin := buildNexus(t, t.TempDir())
	home, proj, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	env := hookEnv(t, home, "NAURO_HOME="+filepath.Join(home, "nauro"))

	tests := []struct {
		name   string
		dir    string
		args   []string
		code   int
		stdout string // a part of what stdout must say
		stderr string // a part of what stderr must say
	}{
		{name: "unknown command", args: []string{"decision", "frob"}, code: exitUsage, stderr: `nexus: unknown command "frob" for "nexus decision"`},
		{name: "missing argument", args: []string{"decision", "show"}, code: exitUsage, stderr: "nexus: usage: nexus decision show"},
		{name: "extra argument", args: []string{"decision", "init", "a", "b"}, code: exitUsage, stderr: "accepts at most 1 arg(s)"},
		{name: "no command", args: []string{"decision"}, code: exitUsage, stderr: "nexus decision needs a command: check, export, format, init"},
		{name: "unknown flag", args: []string{"decision", "list", "--frob"}, code: exitUsage, stderr: "unknown flag: --frob"},
		{name: "help", args: []string{"decision", "--help"}, code: exitOK, stdout: "nexus decision [command]"},
		{name: "help command", args: []string{"help", "decision"}, code: exitOK, stdout: "Available Commands"},
		{name: "help command, subcommand", args: []string{"help", "decision", "list"}, code: exitOK, stdout: "List decisions, newest first"},
		{name: "subcommand help", args: []string{"decision", "list", "--help"}, code: exitOK, stdout: "nexus decision list"},
		// --project, before or after `decision`, names the folder the
		// store is found from (and the configuration read).
		{name: "init in --project", dir: elsewhere, args: []string{"--project", proj, "decision", "init", "shop"}, code: exitOK, stdout: `Initialised project "shop"`},
		{name: "list in --project", dir: elsewhere, args: []string{"decision", "--project=" + proj, "list"}, code: exitOK, stdout: "D001  [active    ]  Initial project setup"},
		{name: "no store", dir: elsewhere, args: []string{"decision", "list"}, code: exitFailure, stderr: "nexus: "},
		{name: "bad --project", args: []string{"--project", filepath.Join(proj, "none"), "decision", "list"}, code: exitUsage, stderr: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = proj
			}
			out, errOut, code := runNexus(t, bin, dir, env, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, want %d (stdout should say %q, stderr %q)\nstdout: %s\nstderr: %s", code, tt.code, tt.stdout, tt.stderr, out, errOut)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(proj, ".nauro", "config.json")); err != nil {
		t.Errorf("init --project did not point %s at its store: %v", proj, err)
	}

	t.Run("configuration", func(t *testing.T) {
		// decisions.frontmatter reaches the store's command line; a
		// configuration that does not load stops a subcommand (not --help).
		cfg := filepath.Join(proj, ".nexus", "nexus.yaml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(filepath.Dir(cfg)) })
		if err := os.WriteFile(cfg, []byte("decisions:\n  frontmatter: reference\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := runNexus(t, bin, proj, env, "", "decision", "propose", "--title", "Keep a changelog",
			"--rationale", "Every release gets a human-written changelog entry."); code != 0 {
			t.Fatalf("propose: exit %d\n%s\n%s", code, out, errOut)
		}
		files, _ := filepath.Glob(filepath.Join(home, "nauro", "projects", "*", "decisions", "*-keep-a-changelog.md"))
		if len(files) != 1 {
			t.Fatalf("decision file: %v", files)
		}
		if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), "decision_type: null\n") {
			t.Errorf("decisions.frontmatter: reference not applied:\n%s", b)
		}
		// A key in the wrong shape is a warning: the command runs.
		if err := os.WriteFile(cfg, []byte("decisions: [not, a, mapping]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runNexus(t, bin, proj, env, "", "decision", "list"); code != exitOK || !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "nexus.yaml") {
			t.Errorf("list with a warning: exit %d, stderr %s", code, errOut)
		}
		// A file that cannot be parsed stops it: exit 3.
		if err := os.WriteFile(cfg, []byte("decisions: [\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runNexus(t, bin, proj, env, "", "decision", "list"); code != exitConfig || !strings.Contains(errOut, "nexus.yaml") {
			t.Errorf("list with a broken configuration: exit %d, stderr %s", code, errOut)
		}
		if out, _, code := runNexus(t, bin, proj, env, "", "decision", "--help"); code != exitOK || !strings.Contains(out, "Available Commands") {
			t.Errorf("--help with a broken configuration: exit %d\n%s", code, out)
		}
	})

	t.Run("without the plugin host", func(t *testing.T) {
		alone := nexusAlone(t)
		bare := hookEnv(t, home)
		bare[0] = "PATH=" + t.TempDir() // no nexus-plugins on PATH either
		_, errOut, code := runNexus(t, alone, proj, bare, "", "decision", "list")
		if code != exitFailure || !strings.Contains(errOut, "nexus decision runs in the plugin host: the plugin host nexus-plugins is not installed") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
	})
}
