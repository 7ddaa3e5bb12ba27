package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// setEnv sets variables for one test (viper reads the process environment).
func setEnv(t *testing.T, m map[string]string) {
	t.Helper()
	for k, v := range m {
		t.Setenv(k, v)
	}
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
	setEnv(t, map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "NEXUS_CORE_DIR": "/from/env", "NEXUS_MCP_HTTP_ADDR": "127.0.0.1:3", "NEXUS_HARNESS_ID": ""})
	c, err := Load(Options{
		ProjectDir: project,
		Flags:      pflags{flags},
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
			_, err := Load(Options{ProjectDir: dir, UserFile: filepath.Join(dir, "none.yaml"), IgnoreEnv: true})
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

func TestEnvErrors(t *testing.T) {
	tests := []struct {
		env, value, key string
		want            string
	}{
		{"NEXUS_MEMORY_GC_AUTO", "maybe", "memory.gc.auto", "expected true or false"},
		{"NEXUS_MEMORY_GC_MAX_ACCESS_COUNT", "0x10", "memory.gc.max_access_count", "expected an integer"},
		{"NEXUS_MEMORY_MERGE_THRESHOLD", "high", "memory.merge.threshold", "expected a number"},
		{"NEXUS_PLUGINS_SETTINGS", "a=b", "plugins.settings", "a mapping cannot be set from the environment"},
		{"NEXUS_GATE_EXTRA_DENIALS", "Bash", "gate.extra_denials", "a mapping cannot be set from the environment"},
		{"NEXUS_GATE_POLICY", "sometimes", "gate.policy", "is not one of"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			_, err := Load(Options{UserFile: "/nonexistent"})
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tt.key || !strings.Contains(err.Error(), tt.env) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a config error naming %s and %s with %q", err, tt.env, tt.key, tt.want)
			}
		})
	}
}

// TestEnvValues: a variable's text is read the way nexus documents it,
// not the way viper's casts would (comma lists, decimal integers), and the
// value reports the variable as its source.
func TestEnvValues(t *testing.T) {
	tests := []struct {
		env, value, key string
		want            any
	}{
		{"NEXUS_PLUGINS_PATHS", "a dir, b", "plugins.paths", []string{"a dir", "b"}},
		{"NEXUS_PLUGINS_DISABLED", ",x,,", "plugins.disabled", []string{"x"}},
		{"NEXUS_MEMORY_GC_MIN_DAYS_SINCE_ACCESS", "08", "memory.gc.min_days_since_access", 8},
		{"NEXUS_MEMORY_GC_MAX_ACCESS_COUNT", "-1", "memory.gc.max_access_count", -1},
		{"NEXUS_MEMORY_MERGE_THRESHOLD", "0.5", "memory.merge.threshold", 0.5},
		{"NEXUS_DECISIONS_ENABLED", "false", "decisions.enabled", false},
		{"NEXUS_PLUGINS_HOOK_SERVER", "0", "plugins.hook_server", false},
		{"NEXUS_LOG_LEVEL", "warn", "log.level", "warn"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			c, err := Load(Options{UserFile: "/nonexistent"})
			if err != nil {
				t.Fatal(err)
			}
			k, _ := Lookup(tt.key)
			if got := c.value(k); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.key, got, tt.want)
			}
			if got := c.Source(tt.key); got != (Source{Layer: LayerEnv, Detail: tt.env}) {
				t.Errorf("%s came from %v, want %s", tt.key, got, tt.env)
			}
		})
	}
}

// TestEveryKeyHasItsVariable: every key that is not a mapping is bound to
// the variable EnvName gives it, and viper answers with that variable.
func TestEveryKeyHasItsVariable(t *testing.T) {
	sample := map[Kind]string{String: "x", Bool: "true", Int: "7", Float: "0.25", StringList: "p,q"}
	for _, k := range Keys {
		if k.Kind == Map {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			text := sample[k.Kind]
			switch k.Name {
			case "harness.id":
				text = "other"
			case "gate.policy":
				text = "fail-closed"
			case "gate.unplanned_edit":
				text = "warn"
			case "decisions.frontmatter":
				text = "reference"
			case "log.level":
				text = "error"
			case "memory.gc.auto":
				text = "false"
			}
			t.Setenv(EnvName(k.Name), text)
			c, err := Load(Options{UserFile: "/nonexistent"})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := parseText(&k, text)
			if got := c.value(&k); !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %#v, want %#v from %s", k.Name, got, want, EnvName(k.Name))
			}
			if c.Source(k.Name).Layer != LayerEnv {
				t.Errorf("%s came from %v", k.Name, c.Source(k.Name))
			}
		})
	}
}

// TestSectionVariablesHideNothing: a variable named after a section (what
// viper's AutomaticEnv would treat as the section's value) leaves the keys
// below it alone.
func TestSectionVariablesHideNothing(t *testing.T) {
	setEnv(t, map[string]string{"NEXUS_MEMORY": "x", "NEXUS_MEMORY_GC": "x", "NEXUS_GATE": "x", "NEXUS_MCP": "x"})
	c, err := Load(Options{UserFile: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Float("memory.merge.threshold") != 0.35 || c.Int("memory.gc.max_access_count") != -1 || c.String("gate.policy") != "fail-open" || c.String("mcp.tool_prefix") != "nx_" {
		t.Errorf("section variables changed keys below them: %v", c.All())
	}
}

// TestMappingsKeepTheirKeys: the names inside a mapping belong to its
// consumer (a plugin's settings), so their case survives, and the files'
// mappings merge key by key.
func TestMappingsKeepTheirKeys(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	write(t, user, "plugins:\n  settings:\n    Lint:\n      apiKey: u\n      Level: low\n")
	write(t, filepath.Join(dir, ProjectFile), "plugins:\n  settings:\n    Lint:\n      Level: high\n    other:\n      URL: x\n")
	c, err := Load(Options{ProjectDir: dir, UserFile: user, IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"Lint":  map[string]any{"apiKey": "u", "Level": "high"},
		"other": map[string]any{"URL": "x"},
	}
	if got := c.Map("plugins.settings"); !reflect.DeepEqual(got, want) {
		t.Errorf("plugins.settings = %#v, want %#v", got, want)
	}
	if got := Defaults().Map("plugins.settings"); got == nil || len(got) != 0 {
		t.Errorf("default plugins.settings = %#v, want an empty mapping", got)
	}
}

func TestAllListsEveryKey(t *testing.T) {
	c, err := Load(Options{UserFile: "/nonexistent", IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.All()) != len(Keys) {
		t.Fatalf("All has %d entries, want %d", len(c.All()), len(Keys))
	}
}

// TestErrorKinds: every configuration error says what kind of problem it
// is and which layer it is in, so that callers never match its text.
func TestErrorKinds(t *testing.T) {
	tests := []struct {
		name, project, env string
		kind               ErrorKind
		layer              string
	}{
		{"unknown key", "colour: red\n", "", KindUnknownKey, LayerProject},
		{"wrong type", "memory:\n  gc:\n    auto: yes-please\n", "", KindBadValue, LayerProject},
		{"bad enum", "gate:\n  policy: sometimes\n", "", KindBadValue, LayerProject},
		{"bad harness id", "harness:\n  id: Upper\n", "", KindBadValue, LayerProject},
		{"bad yaml", "a: [\n", "", KindUnparseable, LayerProject},
		{"not a mapping", "- a\n", "", KindUnparseable, LayerProject},
		{"untrusted", "mcp:\n  http_addr: 0.0.0.0:1\n", "", KindUntrusted, LayerProject},
		{"bad variable", "", "sometimes", KindBadValue, LayerEnv},
		{"rule between keys", "memory:\n  gc:\n    auto: true\n", "", KindBadValue, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.project != "" {
				write(t, filepath.Join(dir, ProjectFile), tt.project)
			}
			if tt.env != "" {
				t.Setenv("NEXUS_GATE_POLICY", tt.env)
			}
			_, err := Load(Options{ProjectDir: dir, NoUserFile: true, IgnoreEnv: tt.env == ""})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *Error", err)
			}
			if ce.Kind != tt.kind || ce.Layer != tt.layer {
				t.Errorf("kind %v, layer %q; want %v, %q (%v)", ce.Kind, ce.Layer, tt.kind, tt.layer, err)
			}
		})
	}
}

// TestUnreadableFileKind: a file that exists but cannot be read is its
// own kind, wrapping the cause.
func TestUnreadableFileKind(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ProjectFile), 0o755); err != nil { // a folder where the file goes
		t.Fatal(err)
	}
	_, err := Load(Options{ProjectDir: dir, NoUserFile: true, IgnoreEnv: true})
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindUnreadable || ce.Err == nil {
		t.Fatalf("err = %v, want an unreadable-file *Error with its cause", err)
	}
}

// TestProblemsLeaveOutOnlyTheirKey: a typo never switches the
// configuration off. An unknown key, a bad value (in a file or a
// variable) and a setting the project may not make each leave out their
// own key, which keeps what the layers below give it, and are warnings in
// file order with what nexus does instead; everything else applies.
func TestProblemsLeaveOutOnlyTheirKey(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	write(t, user, "log:\n  level: debug\nmcp:\n  tool_prefix: u_\n")
	write(t, filepath.Join(dir, ProjectFile), "harness:\n  id: other\ngate:\n  unplaned_edit: warn\n  policy: fail-closd\nmcp:\n  http_addr: 0.0.0.0:1\n  tool_prefix: p_\nlog:\n  level: loud\n")
	t.Setenv("NEXUS_GATE_UNPLANNED_EDIT", "wran")
	t.Setenv("NEXUS_MEMORY_MERGE_THRESHOLD", "0.5")
	c, err := Load(Options{ProjectDir: dir, UserFile: user})
	if c == nil || err == nil {
		t.Fatalf("Load = %v, %v; want the configuration and its problems", c, err)
	}
	for key, want := range map[string]string{
		"harness.id":          "other",          // the good keys of the project file apply
		"mcp.tool_prefix":     "p_",             //
		"log.level":           "debug",          // a bad value keeps the user file's
		"gate.policy":         "fail-open",      // and the default
		"gate.unplanned_edit": "deny",           // a bad variable keeps the default
		"mcp.http_addr":       "127.0.0.1:7777", // the untrusted setting is left out
	} {
		if got := c.String(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if got := c.Float("memory.merge.threshold"); got != 0.5 {
		t.Errorf("a good variable is left out: %v", got)
	}
	type row struct {
		kind  ErrorKind
		layer string
		key   string
		line  string
		eff   string
	}
	want := []row{
		{KindUnknownKey, LayerProject, "gate.unplaned_edit", "nexus.yaml:4:3", "so it is ignored: gate.unplanned_edit stays deny (the default)"},
		{KindBadValue, LayerProject, "gate.policy", "nexus.yaml:5:3", "so gate.policy stays fail-open (the default)"},
		{KindUntrusted, LayerProject, "mcp.http_addr", "nexus.yaml:7:3", "so mcp.http_addr stays 127.0.0.1:7777 (the default)"},
		{KindBadValue, LayerProject, "log.level", "nexus.yaml:10:3", "so log.level stays debug (from user (" + user + "))"},
		{KindBadValue, LayerEnv, "gate.unplanned_edit", "NEXUS_GATE_UNPLANNED_EDIT", "so gate.unplanned_edit stays deny (the default)"},
	}
	got := c.Problems()
	if len(got) != len(want) {
		t.Fatalf("problems %v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Kind != w.kind || g.Layer != w.layer || g.Key != w.key || !strings.Contains(g.Where, w.line) || g.Effect != w.eff || g.Broken() {
			t.Errorf("problem %d = %+v (%s), want %+v", i, *g, g.Text(), w)
		}
	}
	if len(c.Warnings()) != len(want) || len(c.Broken()) != 0 || c.Err() != nil {
		t.Errorf("warnings %d, broken %v, err %v: every problem here is a warning", len(c.Warnings()), c.Broken(), c.Err())
	}
}

// TestBrokenFileLeavesItsLayerOut: a file that cannot be parsed is left
// out whole, and that is the configuration's error; the other layers
// apply.
func TestBrokenFileLeavesItsLayerOut(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	write(t, user, "log:\n  level: debug\n")
	write(t, filepath.Join(dir, ProjectFile), "log:\n  level: warn\nharness: [\n")
	c, err := Load(Options{ProjectDir: dir, UserFile: user, IgnoreEnv: true})
	if c == nil || err == nil {
		t.Fatalf("Load = %v, %v", c, err)
	}
	if got := c.String("log.level"); got != "debug" {
		t.Errorf("log.level = %q: the user file must apply, the broken project file not at all", got)
	}
	b := c.Broken()
	if len(b) != 1 || b[0].Kind != KindUnparseable || b[0].Layer != LayerProject || !strings.Contains(b[0].Effect, "until it is fixed") {
		t.Fatalf("broken = %v", b)
	}
	var ce *Error
	if !errors.As(c.Err(), &ce) || ce != b[0] || len(c.Warnings()) != 0 {
		t.Errorf("Err = %v, warnings %v", c.Err(), c.Warnings())
	}
}

// TestNoUserFile: the user file is left out without a path trick.
func TestNoUserFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	write(t, filepath.Join(dir, "nexus", "config.yaml"), "log:\n  level: debug\n")
	c, err := Load(Options{NoUserFile: true, IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String("log.level"); got != "info" || len(c.Files) != 0 {
		t.Errorf("log.level %q from %v: the user file was read", got, c.Files)
	}
}

// pflags serves a pflag set as Options.Flags, as nexus-full does.
type pflags struct{ fs *pflag.FlagSet }

func (p pflags) Flag(name string) (value, typ string, changed, defined bool) {
	f := p.fs.Lookup(name)
	if f == nil {
		return "", "", false, false
	}
	return f.Value.String(), f.Value.Type(), f.Changed, true
}
