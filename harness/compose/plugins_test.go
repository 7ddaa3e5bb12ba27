package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// loadConfig loads a project's configuration from a user file holding
// yaml (a project file may not set decisions.nauro_home, docs/security.md).
func loadConfig(t *testing.T, dir, yaml string) *config.Config {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".nexus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{ProjectDir: dir, UserFile: filepath.Join(dir, "user.yaml"), IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPluginSettingsFromConfig(t *testing.T) {
	cases := []struct {
		yaml string
		want map[string]string
	}{
		{"", map[string]string{"frontmatter": "documented"}},
		{"decisions:\n  frontmatter: reference\n  nauro_home: /h\n  store: st\n", map[string]string{"frontmatter": "reference", "nauro_home": "/h", "store": "st"}},
		// A plugins.settings entry stands unless the decisions.* key is set.
		{"plugins:\n  settings:\n    decisions:\n      frontmatter: reference\n", map[string]string{"frontmatter": "reference"}},
		{"decisions:\n  frontmatter: documented\nplugins:\n  settings:\n    decisions:\n      frontmatter: reference\n", map[string]string{"frontmatter": "documented"}},
	}
	for _, c := range cases {
		cfg := loadConfig(t, t.TempDir(), c.yaml)
		got := pluginSettings(cfg)["decisions"]
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: %v, want %v", c.yaml, got, c.want)
		}
	}
}

func TestPluginOptions(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		nexusRoot string // relative to the project; "" = none
		// want
		builtin  bool
		dataRoot string // relative to the project; "" = none
		anchor   string // relative to the project
		prefixes []string
		disabled []string
	}{
		{name: "defaults", builtin: true, dataRoot: ".nexus/state/nexus/plugins", anchor: ".", prefixes: []string{"nx_"}},
		{name: "store off, own prefix, harness id", yaml: "decisions:\n  enabled: false\nmcp:\n  tool_prefix: my_\nharness:\n  id: other\nplugins:\n  disabled: [a]\n",
			dataRoot: ".nexus/state/other/plugins", anchor: ".", prefixes: []string{"my_"}, disabled: []string{"a"}},
		{name: "a .nexus root of its own is the anchor", nexusRoot: "elsewhere", builtin: true, dataRoot: "elsewhere/state/nexus/plugins", anchor: "elsewhere", prefixes: []string{"nx_"}},
		{name: "a .nexus root that is a file: no data folder", nexusRoot: "user.yaml", builtin: true, prefixes: []string{"nx_"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := t.TempDir()
			loadConfig(t, proj, tt.yaml)
			root := ""
			if tt.nexusRoot != "" {
				root = filepath.Join(proj, tt.nexusRoot)
			}
			o, err := New(Options{Project: proj, Config: config.Options{UserFile: filepath.Join(proj, "user.yaml"), IgnoreEnv: true}}).PluginOptions(root)
			if err != nil {
				t.Fatal(err)
			}
			if o.ProjectDir != proj {
				t.Errorf("ProjectDir = %q", o.ProjectDir)
			}
			if got := len(o.Builtin) == 1 && o.Builtin[0].Name == decisionsapi.Name; got != tt.builtin {
				t.Errorf("bundled store declared = %v, want %v (%d built-ins)", got, tt.builtin, len(o.Builtin))
			}
			wantRoot, wantAnchor := "", ""
			if tt.dataRoot != "" {
				wantRoot, wantAnchor = filepath.Join(proj, tt.dataRoot), filepath.Join(proj, tt.anchor)
			}
			if o.DataRoot != wantRoot || o.DataAnchor != wantAnchor {
				t.Errorf("data folder %q beneath %q, want %q beneath %q", o.DataRoot, o.DataAnchor, wantRoot, wantAnchor)
			}
			if !slices.Equal(o.ReservedPrefixes, tt.prefixes) {
				t.Errorf("reserved prefixes %v, want %v", o.ReservedPrefixes, tt.prefixes)
			}
			if !slices.Equal(o.Disabled, tt.disabled) {
				t.Errorf("disabled %v, want %v", o.Disabled, tt.disabled)
			}
			// The store's names stay reserved while it is off.
			for _, n := range decisionsapi.Tools() {
				if o.Reserved[n] == "" {
					t.Errorf("%s is not reserved", n)
				}
			}
			if o.Settings[decisionsapi.Name] == nil {
				t.Error("no settings for the bundled store")
			}
		})
	}
}
