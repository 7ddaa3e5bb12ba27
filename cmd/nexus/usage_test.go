package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// TestExitCodes holds the exit-code table of the README for the ways a
// command can be called wrongly (2), and for help, which is not an error.
// `nexus decision` runs in the plugin host: TestDecisionRunsInThePluginHost.
func TestExitCodes(t *testing.T) {
	proj := t.TempDir()
	core := testenv.CoreDir(t)
	tests := []struct {
		args   []string
		code   int
		stderr string // a part of what stderr must say
		stdout string // a part of what stdout must say
	}{
		{args: []string{"frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus"`},
		{args: []string{"versoin"}, code: exitUsage, stderr: "did you mean version?"},
		{args: []string{"plugin", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus plugin"`},
		{args: []string{"memory", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus memory"`},
		{args: []string{"config", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus config"`},
		{args: []string{"state", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus state"`},
		{args: []string{"install", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus install"`},
		{args: []string{"uninstall", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus uninstall"`},
		{args: []string{"tags", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus tags"`},
		{args: []string{"mcp", "frob"}, code: exitUsage, stderr: `unknown command "frob" for "nexus mcp"`},
		{args: []string{"plugin"}, code: exitUsage, stderr: "nexus plugin needs a command: inspect, list, verify"},
		{args: []string{"config"}, code: exitUsage, stderr: "nexus config needs a command"},
		{args: []string{}, code: exitUsage, stderr: "nexus needs a command"},
		{args: []string{"version", "--frob"}, code: exitUsage, stderr: "unknown flag: --frob"},
		{args: []string{"plugin", "--frob"}, code: exitUsage, stderr: "unknown flag: --frob"},
		{args: []string{"version", "extra"}, code: exitUsage, stderr: "nexus version: unknown command"},
		{args: []string{"tags", "explain", "a", "b"}, code: exitUsage, stderr: "accepts 1 arg(s), received 2"},
		{args: []string{"plugin", "inspect"}, code: exitUsage, stderr: "accepts 1 arg(s), received 0"},
		{args: []string{"hook", "a", "b"}, code: exitUsage, stderr: "accepts at most 1 arg(s)"},
		{args: []string{"memory", "access", "x"}, code: exitUsage, stderr: "did you mean --merge?"},
		{args: []string{"memory", "access", "--merge"}, code: exitUsage, stderr: "--merge needs at least one memory-access.jsonl file"},
		{args: []string{"memory", "gc", "x"}, code: exitUsage, stderr: "did you mean --delete?"},
		{args: []string{"memory", "gc", "--delete"}, code: exitUsage, stderr: "--delete needs the memory files to delete"},
		{args: []string{"conformance", "x"}, code: exitUsage, stderr: "only taken as the rest of a --target command"},
		{args: []string{"help", "frob"}, code: exitUsage, stderr: `no help for "frob"`},
		{args: []string{"--help"}, code: exitOK, stdout: "Available Commands"},
		{args: []string{"plugin", "--help"}, code: exitOK, stdout: "nexus plugin [command]"},
		{args: []string{"help", "plugin", "list"}, code: exitOK, stdout: "nexus plugin list"},
		{args: []string{"version"}, code: exitOK, stdout: "nexus "},
		{args: []string{"--project", proj, "--core", core, "tags", "explain", "[m] sqlite needs busy_timeout"}, code: exitOK, stdout: "nothing saved yet"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.stderr, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout does not say %q:\n%s", tt.stdout, stdout.String())
			}
		})
	}
}

// TestCommandTree checks what every command must declare: how many
// arguments it takes (cobra otherwise accepts any), and a Use line naming
// arguments only (cobra lists the flags itself).
func TestCommandTree(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Args == nil {
			t.Errorf("%s: no Args: say how many arguments it takes", c.CommandPath())
		}
		if strings.Contains(c.Use, "-") && strings.Contains(c.Use, " -") {
			t.Errorf("%s: Use %q names flags; cobra lists them under Flags", c.CommandPath(), c.Use)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmdFor(nil))
}

// TestDoctorRootNotAFolder: a --nexus-root that is not a folder is a wrong
// call (2); the same from the configuration is a failure (1).
func TestDoctorRootNotAFolder(t *testing.T) {
	proj := t.TempDir()
	core := testenv.CoreDir(t)
	file := filepath.Join(proj, "not-a-folder")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		flag bool
		code int
	}{{"flag", true, exitUsage}, {"config", false, exitFailure}} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--project", proj, "--core", core, "doctor"}
			if tt.flag {
				args = append(args, "--nexus-root", file)
			} else {
				t.Setenv("NEXUS_RUNTIME_ROOT", file)
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), "not-a-folder") {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, stderr.String())
			}
		})
	}
}
