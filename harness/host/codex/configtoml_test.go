package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var (
	hashA = "sha256:" + strings.Repeat("a", 64)
	hashB = "sha256:" + strings.Repeat("b", 64)
	trust = []TrustEntry{
		{"/home/me/.codex/hooks.json:pre_tool_use:1:0", hashA},
		{"/home/me/.codex/hooks.json:session_start:1:0", hashB},
	}
	installEdit = ConfigEdit{
		Servers: []MCPServer{
			{Name: "nexus", Command: testNexus, Args: []string{"mcp", "--without", "decisions"}, Env: map[string]string{"NEXUS_CORE_DIR": "/opt/nexus core", "NEXUS_LOG": "warn"}},
			{Name: "nauro", Command: testNexus, Args: []string{"mcp", "--only", "decisions"}},
		},
		Trust: trust,
	}
	uninstallEdit = ConfigEdit{RemoveServers: []string{"nexus", "nauro"}, RemoveTrust: trust}
)

// TestEditConfigGolden installs into and uninstalls from realistic user
// configs and checks: the result (golden), that a second install changes
// nothing, and that uninstalling gives back the user's file byte for byte
// when it held nothing of nexus's.
func TestEditConfigGolden(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "config", "*.toml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, file := range names {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := EditConfig(src, installEdit)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("config", name+".install.golden"), withNotes(inst))
			again, err := EditConfig(inst.Data, installEdit)
			if err != nil || again.Changed || !bytes.Equal(again.Data, inst.Data) {
				t.Errorf("a second install changed the file (%v):\n%s", err, again.Data)
			}
			un, err := EditConfig(inst.Data, uninstallEdit)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("config", name+".uninstall.golden"), withNotes(un))
			if !hasNexus(t, src) && !sameModuloFinalNewline(un.Data, src) {
				t.Errorf("uninstall did not give back the user's file:\n got %q\nwant %q", un.Data, src)
			}
		})
	}
}

func withNotes(r ConfigResult) []byte {
	out := append([]byte(nil), r.Data...)
	for _, n := range r.Notes {
		out = append(out, "\n#### note: "+n...)
	}
	return out
}

// hasNexus reports whether a config holds anything the test edits touch.
func hasNexus(t testing.TB, src []byte) bool {
	m, err := decodeTOML(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range installEdit.Servers {
		if _, ok := lookup(m, []string{"mcp_servers", s.Name}); ok {
			return true
		}
	}
	for _, e := range installEdit.Trust {
		if _, ok := lookup(m, []string{"hooks", "state", e.Key}); ok {
			return true
		}
	}
	return false
}

// sameModuloFinalNewline: an install into a file whose last line has no
// newline adds one, which the uninstall keeps.
func sameModuloFinalNewline(got, want []byte) bool {
	rest, ok := bytes.CutPrefix(got, want)
	return ok && (len(rest) == 0 || string(rest) == "\n" || string(rest) == "\r\n")
}

func TestEditConfigRefuses(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"not TOML", "model = \n", "not valid TOML"},
		{"table twice", "[a]\nx = 1\n[a]\ny = 2\n", "not valid TOML"},
		{"inline server at the top", "mcp_servers.nexus = { command = \"nexus\", args = [\"mcp\"] }\n", "defines mcp_servers.nexus as an inline value"},
		{"inline server in its parent", "[mcp_servers]\nnexus = { command = \"nexus\", args = [\"mcp\"] }\n", "line 2 defines mcp_servers.nexus as an inline value"},
		{"dotted keys in the parent", "[mcp_servers]\nnexus.command = \"nexus\"\nnexus.args = [\"mcp\"]\n", "defines mcp_servers.nexus with a dotted key"},
		{"dotted keys at the top", "mcp_servers.nexus.command = \"/bin/nexus\"\nmcp_servers.nexus.args = [\"mcp\"]\n", "with a dotted key"},
		{"servers inline", "mcp_servers = { fs = { command = \"mcp-fs\" } }\n", "inside an inline value of mcp_servers"},
		{"env with dotted keys", "[mcp_servers.nexus]\ncommand = \"nexus\"\nargs = [\"mcp\"]\nenv.X = \"1\"\n", "defines mcp_servers.nexus.env with a dotted key"},
		{"env inline", "[mcp_servers.nexus]\ncommand = \"nexus\"\nargs = [\"mcp\"]\nenv = { X = \"1\" }\n", "defines mcp_servers.nexus.env as an inline value"},
		{"array of servers", "[[mcp_servers]]\nname = \"x\"\n", "array of tables [[mcp_servers]]"},
		{"hook state inline", "[hooks]\nstate = { \"k\" = { trusted_hash = \"sha256:x\" } }\n", "inside an inline value of hooks.state"},
		{"hook trust with a dotted key", "[hooks.state]\n\"/home/me/.codex/hooks.json:pre_tool_use:1:0\".trusted_hash = \"sha256:x\"\n", "with a dotted key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := EditConfig([]byte(c.src), installEdit)
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("EditConfig = %v; want a ConfigError saying %q", err, c.want)
			}
			if res.Changed || !bytes.Equal(res.Data, []byte(c.src)) {
				t.Errorf("a refused edit returned new data: %q", res.Data)
			}
		})
	}
}

// TestEditConfigLeavesOthersAlone: entries nexus did not write, whatever
// their form, are left with a note, never refused or rewritten.
func TestEditConfigLeavesOthersAlone(t *testing.T) {
	for _, src := range []string{
		"mcp_servers.nexus = { url = \"https://example.com/mcp\" }\n",
		"[mcp_servers.nexus]\ncommand = \"nexus-but-not\"\nargs = [\"serve\"]\n",
		"[mcp_servers.nauro]\ncommand = \"uvx\"\nargs = [\"nauro\"]\n",
	} {
		un, err := EditConfig([]byte(src), uninstallEdit)
		if err != nil || un.Changed {
			t.Errorf("uninstall from %q: %v, %q", src, err, un.Data)
		}
		inst, err := EditConfig([]byte(src), ConfigEdit{Servers: installEdit.Servers})
		if err != nil || !strings.HasPrefix(string(inst.Data), src) {
			t.Errorf("install into %q: %v, %q", src, err, inst.Data)
		}
		if len(inst.Notes) == 0 {
			t.Errorf("install into %q: no note about the server left alone", src)
		}
	}
}

// TestEditConfigTrustOwnership: uninstall removes a trust entry only while
// its hash is still the one nexus wrote, and keeps the user's other keys.
func TestEditConfigTrustOwnership(t *testing.T) {
	key := trust[0].Key
	src := "[hooks.state.\"" + key + "\"]\nenabled = false\ntrusted_hash = \"" + hashA + "\"\n"
	un, err := EditConfig([]byte(src), ConfigEdit{RemoveTrust: []TrustEntry{{key, hashA}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[hooks.state.\"" + key + "\"]\nenabled = false\n"; string(un.Data) != want {
		t.Errorf("uninstall kept %q, want %q", un.Data, want)
	}
	// Re-reviewed since (another hash): not nexus's any more.
	un, err = EditConfig([]byte(src), ConfigEdit{RemoveTrust: []TrustEntry{{key, hashB}}})
	if err != nil || un.Changed {
		t.Errorf("removed a trust entry whose hash nexus did not write: %v %q", err, un.Data)
	}
	// Wanted and removed at once: kept.
	un, err = EditConfig([]byte(src), ConfigEdit{Trust: []TrustEntry{{key, hashA}}, RemoveTrust: []TrustEntry{{key, hashA}}})
	if err != nil || un.Changed {
		t.Errorf("a trust entry both wanted and removed: %v %q", err, un.Data)
	}
	// A wrong hash is rewritten in place, the line's comment kept.
	src2 := "[hooks.state.\"" + key + "\"]\ntrusted_hash = \"sha256:old\"  # by nexus\n"
	inst, err := EditConfig([]byte(src2), ConfigEdit{Trust: []TrustEntry{{key, hashA}}})
	if want := "[hooks.state.\"" + key + "\"]\ntrusted_hash = \"" + hashA + "\" # by nexus\n"; err != nil || string(inst.Data) != want {
		t.Errorf("install: %v\n got %q\nwant %q", err, inst.Data, want)
	}
}

func TestEditConfigRejectsBadInput(t *testing.T) {
	for _, e := range []ConfigEdit{
		{Servers: []MCPServer{{Name: "nexus"}}},
		{Trust: []TrustEntry{{" k", hashA}}},
		{Trust: []TrustEntry{{"k", "md5:x"}}},
		{Servers: []MCPServer{{Name: "nexus", Command: "/bad/\xff/nexus", Args: []string{"mcp"}}}},
	} {
		if res, err := EditConfig(nil, e); err == nil || res.Changed {
			t.Errorf("EditConfig(%+v) = %q, %v; want an error", e, res.Data, err)
		}
	}
}

func TestInspectConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "config", "reviewed.toml"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := EditConfig(src, installEdit)
	if err != nil {
		t.Fatal(err)
	}
	info, err := InspectConfig(inst.Data)
	if err != nil {
		t.Fatal(err)
	}
	want := ConfigInfo{
		Servers: map[string]ServerInfo{
			"nexus": {Command: testNexus, Args: []string{"mcp", "--without", "decisions"}, Env: map[string]string{"NEXUS_CORE_DIR": "/opt/nexus core", "NEXUS_LOG": "warn"}, Nexus: true},
			"nauro": {Command: testNexus, Args: []string{"mcp", "--only", "decisions"}, Nexus: true},
		},
		Hooks: map[string]HookState{
			"/home/me/.codex/hooks.json:pre_tool_use:0:0":  {TrustedHash: "sha256:" + strings.Repeat("1", 64), Enabled: true},
			"/home/me/.codex/hooks.json:pre_tool_use:1:0":  {TrustedHash: hashA, Enabled: true},
			"/home/me/.codex/hooks.json:session_start:1:0": {TrustedHash: hashB, Enabled: false},
		},
		Projects: map[string]string{"/home/me/src/app": "trusted"},
	}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("InspectConfig\n got %+v\nwant %+v", info, want)
	}
	if _, err := InspectConfig([]byte("x = ")); err == nil {
		t.Error("InspectConfig accepted invalid TOML")
	}
}

func TestRenderKeyAndString(t *testing.T) {
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"mcp_servers", "nexus"}, "mcp_servers.nexus"},
		{[]string{"hooks", "state", "/a/b.json:pre_tool_use:0:0"}, `hooks.state."/a/b.json:pre_tool_use:0:0"`},
		{[]string{"a b", `q"\`, "tab\t", ""}, `"a b"."q\"\\"."tab\t".""`},
	} {
		if got := renderKey(c.path); got != c.want {
			t.Errorf("renderKey(%q) = %s, want %s", c.path, got, c.want)
		}
		m, err := decodeTOML([]byte(c.want + " = 1\n"))
		if err != nil {
			t.Fatalf("%s does not parse: %v", c.want, err)
		}
		if _, ok := lookup(m, c.path); !ok {
			t.Errorf("%s does not read back as %q: %v", c.want, c.path, m)
		}
	}
}

func BenchmarkEditConfig(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "config", "typical.toml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EditConfig(src, installEdit); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEditConfigDropsNauro: installing again without the separate decision
// server removes the "nauro" entry nexus wrote and keeps "nexus".
func TestEditConfigDropsNauro(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "config", "typical.toml"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := EditConfig(src, installEdit)
	if err != nil {
		t.Fatal(err)
	}
	nexusOnly := MCPServer{Name: "nexus", Command: testNexus, Args: []string{"mcp"}}
	again, err := EditConfig(inst.Data, ConfigEdit{Servers: []MCPServer{nexusOnly}, RemoveServers: []string{"nauro"}, Trust: trust})
	if err != nil || !again.Changed {
		t.Fatalf("%v, changed %v", err, again.Changed)
	}
	info, err := InspectConfig(again.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.Servers["nauro"]; ok || !reflect.DeepEqual(info.Servers["nexus"].Args, []string{"mcp"}) {
		t.Errorf("servers after dropping nauro: %+v\n%s", info.Servers, again.Data)
	}
	if !bytes.Contains(again.Data, []byte("NEXUS_LOG = \"warn\"")) {
		t.Errorf("the env keys nexus wrote before were dropped:\n%s", again.Data)
	}
}

// A server's env_vars (the variables Codex passes on from its own
// environment) are written, and a second edit changes nothing.
func TestEditConfigEnvVars(t *testing.T) {
	e := ConfigEdit{Servers: []MCPServer{{Name: "nexus", Command: testNexus, Args: []string{"mcp"}, EnvVars: []string{"NEXUS_CORE_DIR", "XDG_CONFIG_HOME"}}}}
	res, err := EditConfig([]byte("# mine\n"), e)
	if err != nil || !strings.Contains(string(res.Data), `env_vars = ["NEXUS_CORE_DIR", "XDG_CONFIG_HOME"]`) {
		t.Fatalf("EditConfig: %v\n%s", err, res.Data)
	}
	again, err := EditConfig(res.Data, e)
	if err != nil || again.Changed {
		t.Errorf("a second edit changed the file: %v\n%s", err, again.Data)
	}
}
