package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestRunExitCodes holds Run to nexus's exit-code table: 0 done (help
// included), 1 failed, 2 called wrongly, with the message on stderr after
// "nexus: " and every command path reading "nexus decision".
func TestRunExitCodes(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tests := []struct {
		args           []string
		prepare        error
		code           int
		stdout, stderr string
	}{
		{args: nil, code: 2, stderr: "nexus: nexus decision needs a command: check, export, format, init, list, propose, search, show, validate (see `nexus decision --help`)"},
		{args: []string{"frob"}, code: 2, stderr: `nexus: unknown command "frob" for "nexus decision" (commands: check,`},
		{args: []string{"lsit"}, code: 2, stderr: "did you mean init or list?"},
		{args: []string{"show"}, code: 2, stderr: "nexus: usage: nexus decision show"},
		{args: []string{"init", "a", "b"}, code: 2, stderr: "nexus: nexus decision init: accepts at most 1 arg(s), received 2 (see `nexus decision init --help`)"},
		{args: []string{"list", "x"}, code: 2, stderr: `unknown command "x" for "nexus decision list"`},
		{args: []string{"list", "--frob"}, code: 2, stderr: "nexus: unknown flag: --frob"},
		{args: []string{"--help"}, code: 0, stdout: "nexus decision [command]"},
		{args: []string{"list", "--help"}, code: 0, stdout: "nexus decision list"},
		{args: []string{"list"}, code: 1, stderr: "nexus: "},                                                  // no store here
		{args: []string{"list"}, prepare: errors.New("config broke"), code: 1, stderr: "nexus: config broke"}, // Prepare's error stops a subcommand
		{args: []string{"--help"}, prepare: errors.New("config broke"), code: 0, stdout: "Available Commands"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			opts := Options{Stdout: &out, Stderr: &errb, Dir: dir, Home: home, Getenv: func(string) string { return "" }}
			if tt.prepare != nil {
				opts.Prepare = func(*Options) error { return tt.prepare }
			}
			code := Run(tt.args, opts)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
		})
	}
}
