package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestUsage holds the exit-code table (0 ok, 1 failure, 2 called wrongly)
// for the ways nexus-plugins can be called wrongly, and for --help.
func TestUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{args: nil, code: 2, stderr: "nexus-plugins host"},
		{args: []string{"--help"}, code: 0, stdout: "nexus-plugins serve decisions"},
		{args: []string{"-h"}, code: 0, stdout: "Exit status"},
		{args: []string{"help"}, code: 0, stdout: "nexus-plugins hook-server"},
		{args: []string{"frob"}, code: 2, stderr: `unknown command "frob"`},
		{args: []string{"serve"}, code: 2, stderr: "name the built-in plugin to run (built in: decisions)"},
		{args: []string{"serve", "frob"}, code: 2, stderr: `no built-in plugin "frob"`},
		{args: []string{"serve", "decisions", "x"}, code: 2, stderr: "takes one plugin name"},
		{args: []string{"host", "x"}, code: 2, stderr: "takes no arguments"},
		{args: []string{"hook-server"}, code: 2, stderr: "--project is required"},
		{args: []string{"hook-server", "--frob"}, code: 2, stderr: "flag provided but not defined: -frob"},
		{args: []string{"hook-server", "--project", "p", "x"}, code: 2, stderr: "takes no arguments"},
		{args: []string{"hook-server", "-h"}, code: 0, stderr: "-idle"},
		{args: []string{"decision", "--frob"}, code: 2, stderr: "flag provided but not defined: -frob"},
		{args: []string{"decision", "-h"}, code: 0, stderr: "-config-error"},
		{args: []string{"decision", "--", "frob"}, code: 2, stderr: `nexus: unknown command "frob" for "nexus decision"`},
		{args: []string{"decision", "--", "--help"}, code: 0, stdout: "nexus decision [command]"},
		{args: []string{"decision", "--config-error", "nexus.yaml: broken", "--", "list"}, code: 3, stderr: "nexus: nexus.yaml: broken"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, io.NopCloser(strings.NewReader("")), &stdout, &stderr)
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
