package claude

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestFindRegistered(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, exe, "#!/bin/sh\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	// A program a cloned repository registers in nexus's shape.
	other := filepath.Join(t.TempDir(), "nexus")
	writeFile(t, other, "#!/bin/sh\necho pwned\n")
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	// install registers nexus (or prog) in a scope and sets its settings' env.
	install := func(t *testing.T, o InstallOptions, env map[string]string, prog ...string) string {
		t.Helper()
		o.Command = exe
		if len(prog) > 0 {
			o.Command = prog[0]
		}
		if _, err := Install(o); err != nil {
			t.Fatal(err)
		}
		r, err := Inspect(o)
		if err != nil {
			t.Fatal(err)
		}
		if env != nil {
			b, err := os.ReadFile(r.Settings)
			if err != nil {
				t.Fatal(err)
			}
			var root map[string]any
			if err := json.Unmarshal(b, &root); err != nil {
				t.Fatal(err)
			}
			root["env"] = env
			b, _ = json.Marshal(root)
			writeFile(t, r.Settings, string(b))
		}
		return r.Settings
	}
	tests := []struct {
		name    string
		project map[string]string // the project scope's env; nil = not installed there
		foreign bool              // the project scope registers another program
		user    map[string]string // the user scope's
		where   string            // "project" or "user"; "" = nil
		env     map[string]string
	}{
		{name: "not registered"},
		{name: "project scope", project: map[string]string{"A": "p"}, where: "project", env: map[string]string{"A": "p"}},
		{name: "user scope", user: map[string]string{"A": "u"}, where: "user", env: map[string]string{"A": "u"}},
		// Claude Code applies the user's settings env too; the project's wins.
		{name: "both: the project's, with the user's env beneath", project: map[string]string{"B": "p"}, user: map[string]string{"A": "u", "B": "u"},
			where: "project", env: map[string]string{"A": "u", "B": "p"}},
		// The doctor never runs a program a project registers unless it
		// is this nexus.
		{name: "project scope running another program", project: map[string]string{"A": "p"}, foreign: true},
		{name: "project scope running another program, user scope", project: map[string]string{"A": "p"}, foreign: true, user: map[string]string{"A": "u"},
			where: "user", env: map[string]string{"A": "u"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj, home := t.TempDir(), t.TempDir()
			settings := map[string]string{}
			if tt.project != nil {
				prog := []string{}
				if tt.foreign {
					prog = append(prog, other)
				}
				settings["project"] = install(t, InstallOptions{Scope: ScopeProject, Project: proj}, tt.project, prog...)
			}
			if tt.user != nil {
				settings["user"] = install(t, InstallOptions{Scope: ScopeUser, Home: home}, tt.user)
			}
			r := FindRegistered(proj, home, exe)
			if tt.where == "" {
				if r != nil {
					t.Fatalf("found %+v, want nothing", r)
				}
				return
			}
			if r == nil {
				t.Fatal("found nothing")
			}
			if r.Where != settings[tt.where] {
				t.Errorf("found in %s, want %s", r.Where, settings[tt.where])
			}
			if len(r.Hook) == 0 || r.Hook[0] != exe || len(r.MCP) == 0 || r.MCP[0] != exe {
				t.Errorf("hook %q, MCP server %q: want both to run %s", r.Hook, r.MCP, exe)
			}
			if !maps.Equal(r.Env, tt.env) {
				t.Errorf("env %v, want %v", r.Env, tt.env)
			}
		})
	}
}
