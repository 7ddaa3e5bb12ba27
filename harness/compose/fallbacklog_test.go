package compose

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/state"
)

func TestLogWithoutEngine(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string // the user's configuration; "-" = one that does not load
		mkdirs  []string
		wantLog string // relative to the project; "" = nothing written
	}{
		{name: "the project's .nexus", yaml: "", mkdirs: []string{".nexus"}, wantLog: ".nexus/state/nexus/nexus.log"},
		{name: "no configuration: the project's .nexus", yaml: "-", mkdirs: []string{".nexus"}, wantLog: ".nexus/state/nexus/nexus.log"},
		{name: "no .nexus: nothing is created", yaml: ""},
		{name: "runtime.root", yaml: "runtime:\n  root: rt\n", mkdirs: []string{".nexus", "rt"}, wantLog: "rt/state/nexus/nexus.log"},
		{name: "runtime.root that does not exist", yaml: "runtime:\n  root: rt\n", mkdirs: []string{".nexus"}},
		{name: "harness.id", yaml: "harness:\n  id: other\n", mkdirs: []string{".nexus"}, wantLog: ".nexus/state/other/nexus.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := t.TempDir()
			r := rootWith(t, proj, tt.yaml)
			for _, d := range tt.mkdirs {
				if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			r.LogWithoutEngine(context.Background(), "PreToolUse", "a1", "the distribution is gone")
			var logs []string
			_ = filepath.WalkDir(proj, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "nexus.log" {
					r, _ := filepath.Rel(proj, p)
					logs = append(logs, filepath.ToSlash(r))
				}
				return nil
			})
			if tt.wantLog == "" {
				if len(logs) != 0 {
					t.Fatalf("wrote %v, want nothing", logs)
				}
				for _, d := range []string{".nexus", "rt"} {
					if !slices.Contains(tt.mkdirs, d) && state.Exists(filepath.Join(proj, d)) {
						t.Errorf("created %s", d)
					}
				}
				return
			}
			if len(logs) != 1 || logs[0] != tt.wantLog {
				t.Fatalf("wrote %v, want %s", logs, tt.wantLog)
			}
			lines, err := state.ReadLines(filepath.Join(proj, tt.wantLog))
			if err != nil || len(lines) != 1 || !strings.Contains(string(lines[0]), "the distribution is gone") || !strings.Contains(string(lines[0]), `"level":"error"`) {
				t.Errorf("nexus.log: %q, %v", lines, err)
			}
		})
	}
}

func TestGatePolicy(t *testing.T) {
	tests := []struct {
		name, yaml, env, want string
	}{
		{"the configuration's", "gate:\n  policy: fail-closed\n", "", "fail-closed"},
		{"the default", "", "", "fail-open"},
		{"no configuration: the variable", "-", "fail-closed", "fail-closed"},
		{"no configuration, no variable", "-", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NEXUS_GATE_POLICY", tt.env)
			if got := rootWith(t, t.TempDir(), tt.yaml).GatePolicy(); got != tt.want {
				t.Errorf("GatePolicy = %q, want %q", got, tt.want)
			}
		})
	}
}

// rootWith is a Root of the project whose user file holds yaml ("-": a
// user file that cannot be parsed), without the environment's variables.
func rootWith(t *testing.T, proj, yaml string) *Root {
	t.Helper()
	user := filepath.Join(t.TempDir(), "user.yaml")
	if yaml == "-" {
		yaml = "colour: [\n"
	}
	if err := os.WriteFile(user, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return New(Options{Project: proj, Config: config.Options{UserFile: user, IgnoreEnv: true}})
}
