package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The keys that decide who reaches nexus, what guards it and where it
// writes outside the project. Changing this list is a security decision:
// update docs/security.md with it.
func TestUserOnlyKeysArePinned(t *testing.T) {
	want := []string{"decisions.nauro_home", "mcp.http_addr", "mcp.token_file"}
	if got := UserOnlyKeys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("user-only keys = %v, want %v", got, want)
	}
	for k := range UserOnly {
		if _, ok := Lookup(k); !ok {
			t.Errorf("user-only key %s is not a configuration key", k)
		}
	}
	for k := range ProjectLocal {
		if _, ok := Lookup(k); !ok {
			t.Errorf("project-local key %s is not a configuration key", k)
		}
	}
}

// TestProjectFileCannotOpenTheDoor: each row sets one value in one layer;
// a project file may not set a user-only key nor point a project-local key
// outside the project, while the user file and the environment may.
func TestProjectFileCannotOpenTheDoor(t *testing.T) {
	cases := []struct {
		name    string
		layer   string // LayerUser, LayerProject or LayerEnv
		yaml    string // for the file layers
		env     map[string]string
		refused string // the key the error must name ("" = accepted)
	}{
		{"project http_addr", LayerProject, "mcp:\n  http_addr: 0.0.0.0:7777\n", nil, "mcp.http_addr"},
		{"project token_file", LayerProject, "mcp:\n  token_file: README.md\n", nil, "mcp.token_file"},
		{"project both (issue 13.9)", LayerProject, "mcp: {token_file: README.md, http_addr: \"0.0.0.0:7777\"}\n", nil, "mcp.http_addr"},
		{"project nauro_home", LayerProject, "decisions:\n  nauro_home: /tmp/elsewhere\n", nil, "decisions.nauro_home"},
		{"project plugin setting nauro_home", LayerProject, "plugins:\n  settings:\n    decisions:\n      nauro_home: /tmp/x\n", nil, "plugins.settings"},
		{"project runtime.root absolute", LayerProject, "runtime:\n  root: /tmp/elsewhere\n", nil, "runtime.root"},
		{"project runtime.root ..", LayerProject, "runtime:\n  root: ../elsewhere\n", nil, "runtime.root"},
		{"project runtime.root ~", LayerProject, "runtime:\n  root: ~/elsewhere\n", nil, "runtime.root"},
		{"project decisions.store absolute", LayerProject, "decisions:\n  store: /tmp/store\n", nil, "decisions.store"},
		{"project plugin setting store ..", LayerProject, "plugins:\n  settings:\n    decisions:\n      store: ../../x\n", nil, "plugins.settings"},
		{"project runtime.root inside", LayerProject, "runtime:\n  root: build/nexus\n", nil, ""},
		{"project decisions.store inside", LayerProject, "decisions:\n  store: .nauro/store\n", nil, ""},
		{"project tool_prefix", LayerProject, "mcp:\n  tool_prefix: p_\n", nil, ""},
		{"user http_addr", LayerUser, "mcp:\n  http_addr: 0.0.0.0:7777\n  token_file: /tmp/tok\n", nil, ""},
		{"user runtime.root absolute", LayerUser, "runtime:\n  root: /tmp/elsewhere\ndecisions:\n  nauro_home: /tmp/n\n", nil, ""},
		{"env http_addr", LayerEnv, "", map[string]string{"NEXUS_MCP_HTTP_ADDR": "0.0.0.0:7777", "NEXUS_MCP_TOKEN_FILE": "/tmp/t", "NEXUS_RUNTIME_ROOT": "/tmp/r"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			user := filepath.Join(dir, "user.yaml")
			proj := filepath.Join(dir, "proj")
			switch c.layer {
			case LayerUser:
				write(t, user, c.yaml)
			case LayerProject:
				write(t, filepath.Join(proj, ProjectFile), c.yaml)
			}
			setEnv(t, c.env)
			cfg, err := Load(Options{ProjectDir: proj, UserFile: user, IgnoreEnv: c.env == nil})
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *Error
			for _, p := range cfg.Problems() {
				if p.Key == c.refused {
					ce = p
				}
			}
			if ce == nil || ce.Kind != KindUntrusted {
				t.Fatalf("Load = %v; want a problem naming %s", err, c.refused)
			}
			if !strings.Contains(ce.Where, ProjectFile) || !strings.Contains(ce.Error(), "project") {
				t.Errorf("problem %q (key %s at %s) does not name %s in the project file", ce, ce.Key, ce.Where, c.refused)
			}
			// The refused setting never takes effect: the key keeps its
			// default.
			if k, ok := Lookup(c.refused); ok && k.Kind == String && cfg.String(c.refused) != k.Default {
				t.Errorf("%s = %q took effect", c.refused, cfg.String(c.refused))
			}
			if k, ok := Lookup(c.refused); ok && k.Kind == Map && len(cfg.Map(c.refused)) != 0 {
				t.Errorf("%s = %v took effect", c.refused, cfg.Map(c.refused))
			}
		})
	}
}
