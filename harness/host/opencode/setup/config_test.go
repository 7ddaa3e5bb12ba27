package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

const testExe = "/usr/local/bin/nexus"

var (
	nexusServer = &MCPServer{Command: []string{testExe, "mcp", "--without", "decisions"}, Environment: map[string]string{"NEXUS_HARNESS_ID": "opencode"}}
	nauroServer = &MCPServer{Command: []string{testExe, "mcp", "--only", "decisions"}}
	install     = ConfigEdit{Nexus: nexusServer, Nauro: nauroServer, Executable: testExe}
	uninstall   = ConfigEdit{Executable: testExe}
)

// configCases are opencode.json files as people write them.
var configCases = []struct{ name, src string }{
	{"none", ""},
	{"plain", "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"anthropic/claude-sonnet-4\"\n}\n"},
	{"jsonc", "// my OpenCode setup\n{\n\t\"$schema\": \"https://opencode.ai/config.json\", // the schema\n\t/* servers */\n\t\"mcp\": {\n\t\t\"github\": {\"type\": \"remote\", \"url\": \"https://example.com/mcp\"}, // remote\n\t},\n\t\"model\": \"x\", // last\n}\n"},
	{"one-line", `{"model": "x", "mcp": {"other": {"type": "remote", "url": "u"}}}`},
	{"empty-mcp", "{\n    \"mcp\": {}\n}\n"},
	{"comment-in-empty-mcp", "{\n  \"mcp\": { // none yet\n  }\n}\n"},
	{"trailing-comment", "{\n  \"mcp\": {\n    \"a\": {\"type\": \"local\", \"command\": [\"a\"]} // keep me\n  }\n}"},
	{"empty-object", "{}"},
	{"bom", "\xef\xbb\xbf{\n  \"model\": \"x\"\n}\n"},
}

// TestEditConfig: install writes mcp.nexus and mcp.nauro in the file's own
// layout (golden), a second install changes no byte, and uninstall gives
// back the very bytes install started from.
func TestEditConfig(t *testing.T) {
	for _, c := range configCases {
		t.Run(c.name, func(t *testing.T) {
			src := []byte(c.src)
			in, err := EditConfig(src, install)
			if err != nil {
				t.Fatal(err)
			}
			if !in.Changed || len(in.Notes) > 0 {
				t.Errorf("install: changed %v, notes %v", in.Changed, in.Notes)
			}
			golden(t, "config/"+c.name+".golden", in.Content)
			again, err := EditConfig(in.Content, install)
			if err != nil || again.Changed || !bytes.Equal(again.Content, in.Content) {
				t.Errorf("a second install changed the file (%v):\n%s", err, again.Content)
			}
			checkOthersKept(t, src, in.Content)
			out, err := EditConfig(in.Content, uninstall)
			if err != nil {
				t.Fatal(err)
			}
			switch c.name {
			case "none":
				// The installer removes a file it created and left empty.
				if string(out.Content) != "{}\n" {
					t.Errorf("uninstall left %q", out.Content)
				}
			case "empty-mcp":
				// An "mcp" left empty goes: nexus cannot tell the one it
				// created from an empty one the user wrote.
				if !reflect.DeepEqual(standard(t, out.Content), map[string]any{}) {
					t.Errorf("uninstall left %q", out.Content)
				}
			default:
				if !bytes.Equal(out.Content, src) {
					t.Errorf("uninstall did not give the original back:\n%q\nwant\n%q", out.Content, src)
				}
			}
			if out.Empty != (strings.TrimSpace(c.src) == "" || c.name == "empty-object" || c.name == "empty-mcp") {
				t.Errorf("uninstall: empty %v", out.Empty)
			}
			if again, err := EditConfig(out.Content, uninstall); err != nil || again.Changed {
				t.Errorf("a second uninstall changed the file (%v)", err)
			}
		})
	}
}

// standard reads JSON with comments as OpenCode does.
func standard(t *testing.T, b []byte) map[string]any {
	t.Helper()
	b = bytes.TrimPrefix(b, bom)
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}
	}
	v, err := hujson.Parse(bytes.Clone(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	v.Standardize()
	var m map[string]any
	if err := json.Unmarshal(v.Pack(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkOthersKept: every key but mcp.nexus and mcp.nauro reads the same,
// and those two are what install asked for.
func checkOthersKept(t *testing.T, before, after []byte) {
	t.Helper()
	b, a := standard(t, before), standard(t, after)
	mcp, _ := a["mcp"].(map[string]any)
	for name, want := range map[string]*MCPServer{"nexus": nexusServer, "nauro": nauroServer} {
		w, _ := json.Marshal(mcpEntry{Type: "local", Command: want.Command, Environment: want.Environment})
		g, _ := json.Marshal(mcp[name])
		if !sameJSON(g, w) {
			t.Errorf("mcp.%s = %s, want %s", name, g, w)
		}
		delete(mcp, name)
	}
	if len(mcp) == 0 {
		if _, had := b["mcp"]; !had {
			delete(a, "mcp")
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("other keys changed:\n%v\nwant\n%v", a, b)
	}
}

func TestEditConfigUpdatesOwnEntry(t *testing.T) {
	src := "{\n  \"mcp\": {\n    // nexus\n    \"nexus\": {\"type\": \"local\", \"command\": [\"/old/nexus\", \"mcp\"]}, // old\n    \"other\": {\"type\": \"remote\", \"url\": \"u\"}\n  }\n}\n"
	res, err := EditConfig([]byte(src), ConfigEdit{Nexus: nexusServer, Executable: testExe})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "config/update-own.golden", res.Content)
	// The same entry laid out by hand is left as it is.
	hand := "{\"mcp\": {\"nexus\": {\n\"environment\": {\"NEXUS_HARNESS_ID\": \"opencode\"}, \"command\": [\"/usr/local/bin/nexus\", \"mcp\", \"--without\", \"decisions\"], \"type\": \"local\"}}}"
	if res, err := EditConfig([]byte(hand), ConfigEdit{Nexus: nexusServer, Executable: testExe}); err != nil || res.Changed {
		t.Errorf("an entry equal to nexus's was rewritten (%v):\n%s", err, res.Content)
	}
	// Removing it keeps the comment above it and the other server.
	res, err = EditConfig([]byte(src), uninstall)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "config/remove-own.golden", res.Content)
}

func TestEditConfigLeavesOthers(t *testing.T) {
	src := "{\n  \"mcp\": {\n    \"nexus\": {\"type\": \"local\", \"command\": [\"node\", \"server.js\"]}\n  }\n}\n"
	res, err := EditConfig([]byte(src), ConfigEdit{Nexus: nexusServer, Executable: testExe})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `"nexus" already exists`) {
		t.Errorf("another tool's nexus entry: changed %v, notes %v", res.Changed, res.Notes)
	}
	if res, _ := EditConfig([]byte(src), uninstall); res.Changed {
		t.Error("uninstall removed another tool's entry")
	}
	exists, ours, err := OwnedEntry([]byte(src), "nexus", testExe)
	if !exists || ours || err != nil {
		t.Errorf("OwnedEntry: %v %v %v", exists, ours, err)
	}
	exists, ours, err = OwnedEntry([]byte(`{"mcp": {"nauro": {"command": ["/opt/nexus", "mcp", "--only", "decisions"]}}}`), "nauro", testExe)
	if !exists || !ours || err != nil {
		t.Errorf("OwnedEntry of a nexus at another path: %v %v %v", exists, ours, err)
	}
}

func TestEditConfigRefuses(t *testing.T) {
	cases := map[string]string{
		"array":          `[1]`,
		"mcp not object": `{"mcp": "x"}`,
		"two mcp":        `{"mcp": {}, "mcp": {}}`,
		"two nexus":      `{"mcp": {"nexus": {}, "nexus": {}}}`,
		"not JSON":       `{"a": }`,
		"comment at EOF": "{} // no newline",
		"deep":           strings.Repeat("[", 100) + strings.Repeat("]", 100),
		"deep in object": `{"a": ` + strings.Repeat(`{"b": `, 70) + "1" + strings.Repeat("}", 70) + "}",
		"too big":        `{"a": "` + strings.Repeat("x", MaxConfigBytes) + `"}`,
	}
	for name, src := range cases {
		_, err := EditConfig([]byte(src), install)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a ConfigError", name, err)
		}
	}
}

func TestJSONCDepth(t *testing.T) {
	for src, want := range map[string]int{
		`{}`:                    1,
		`{"a": [1, {"b": 2}]}`:  3,
		`{"a": "[[[[{{"}`:       1,
		"{// [[[[\n}":           1,
		`{/* [[[[ */}`:          1,
		`{"a": "\"[[["}`:        1,
		strings.Repeat("[", 65): 65,
	} {
		if got := jsoncDepth([]byte(src)); got != want {
			t.Errorf("jsoncDepth(%q) = %d, want %d", src, got, want)
		}
	}
}

func TestConfigFile(t *testing.T) {
	has := func(files ...string) func(string) bool {
		return func(p string) bool {
			for _, f := range files {
				if filepath.Base(p) == f {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		exist, hold []string
		want        string
	}{
		{nil, nil, "opencode.json"},
		{[]string{"opencode.jsonc"}, nil, "opencode.jsonc"},
		{[]string{"opencode.json", "opencode.jsonc"}, nil, "opencode.json"},
		{[]string{"opencode.json", "opencode.jsonc"}, []string{"opencode.jsonc"}, "opencode.jsonc"},
	} {
		if got := filepath.Base(ConfigFile("/p", has(c.exist...), has(c.hold...))); got != c.want {
			t.Errorf("exist %v hold %v: %s, want %s", c.exist, c.hold, got, c.want)
		}
	}
}
