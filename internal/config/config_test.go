package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLayersAndProvenance(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "xdg", "nexus", "config.yaml")
	project := filepath.Join(dir, "proj")
	write(t, user, "log:\n  level: debug\nmcp:\n  tool_prefix: user_\n  http_addr: 127.0.0.1:1\ngate:\n  extra_capabilities:\n    engineer: [no_shell_exec]\n")
	write(t, filepath.Join(project, ProjectFile), "mcp:\n  tool_prefix: proj_\ngate:\n  extra_capabilities:\n    tester: [no_task_update]\n")
	flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
	flags.String("core", "", "")
	flags.String("tool-prefix", "", "")
	if err := flags.Parse([]string{"--core", "/from/flag"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Options{
		ProjectDir: project,
		LookupEnv:  envMap(map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "NEXUS_CORE_DIR": "/from/env", "NEXUS_MCP_HTTP_ADDR": "127.0.0.1:3", "NEXUS_HARNESS_ID": ""}),
		Flags:      flags,
		FlagKeys:   map[string]string{"core.dir": "core", "mcp.tool_prefix": "tool-prefix"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, value, layer string
	}{
		{"harness.id", "nexus", LayerDefault},      // empty env var does not override
		{"log.level", "debug", LayerUser},          // only the user file sets it
		{"mcp.tool_prefix", "proj_", LayerProject}, // project beats user; flag not given
		{"mcp.http_addr", "127.0.0.1:3", LayerEnv}, // env beats both files
		{"core.dir", "/from/flag", LayerFlag},      // flag beats env
	}
	for _, tt := range tests {
		if got := c.String(tt.key); got != tt.value {
			t.Errorf("%s = %q, want %q", tt.key, got, tt.value)
		}
		if got := c.Source(tt.key).Layer; got != tt.layer {
			t.Errorf("%s came from %q, want %q", tt.key, got, tt.layer)
		}
	}
	m := c.Map("gate.extra_capabilities")
	if len(m) != 2 || m["engineer"] == nil || m["tester"] == nil {
		t.Errorf("per-agent mappings should deep-merge across files, got %v", m)
	}
	if !strings.Contains(c.Source("mcp.tool_prefix").Detail, ProjectFile) {
		t.Errorf("project source detail %q does not name the file", c.Source("mcp.tool_prefix").Detail)
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"misspelled key", "memory:\n  gc:\n    atuo: true\n", []string{"nexus.yaml:3:5", "memory.gc.atuo", "unknown configuration key", `did you mean "memory.gc.auto"`}},
		{"unknown section", "colour: red\n", []string{"colour", "unknown configuration key"}},
		{"wrong type", "memory:\n  gc:\n    auto: yes-please\n", []string{"memory.gc.auto", "expected a bool"}},
		{"auto gc needs three thresholds", "memory:\n  gc:\n    auto: true\n    min_days_since_access: 30\n", []string{"memory.gc.min_cycles_since_access", "memory.gc.max_access_count"}},
		{"bad enum", "gate:\n  policy: sometimes\n", []string{"gate.policy", "fail-open"}},
		{"bad yaml", "a: [\n", []string{"invalid YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, ProjectFile), tt.content)
			_, err := Load(Options{ProjectDir: dir, UserFile: filepath.Join(dir, "none.yaml"), LookupEnv: envMap(nil)})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEnvErrorsAndLists(t *testing.T) {
	_, err := Load(Options{UserFile: "/nonexistent", LookupEnv: envMap(map[string]string{"NEXUS_MEMORY_GC_AUTO": "maybe"})})
	var ce *Error
	if !errors.As(err, &ce) || ce.Where != "NEXUS_MEMORY_GC_AUTO" {
		t.Fatalf("err = %v", err)
	}
	c, err := Load(Options{UserFile: "/nonexistent", LookupEnv: envMap(map[string]string{"NEXUS_PLUGINS_PATHS": "a, b"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.StringList("plugins.paths"); len(got) != 2 || got[1] != "b" {
		t.Fatalf("plugins.paths = %q", got)
	}
}

func TestAllListsEveryKey(t *testing.T) {
	c, err := Load(Options{UserFile: "/nonexistent", LookupEnv: envMap(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.All()) != len(Keys) {
		t.Fatalf("All has %d entries, want %d", len(c.All()), len(Keys))
	}
}
