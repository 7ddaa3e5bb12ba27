package claude

import (
	"encoding/json"
	"github.com/nexus-harness/nexus/harness/install"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginPackage(t *testing.T) {
	files, err := PluginFiles(PluginOptions{Command: "/opt/nexus bin/nexus", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Content
	}
	var manifest struct {
		Name, Version string
	}
	if err := json.Unmarshal(byPath[".claude-plugin/plugin.json"], &manifest); err != nil || manifest.Name != PluginName || manifest.Version != "1.2.3" {
		t.Fatalf("plugin.json %s: %v", byPath[".claude-plugin/plugin.json"], err)
	}
	var market struct {
		Name    string
		Owner   struct{ Name string }
		Plugins []struct{ Name, Source string }
	}
	if err := json.Unmarshal(byPath[".claude-plugin/marketplace.json"], &market); err != nil || market.Name != PluginMarketplace || market.Owner.Name == "" ||
		len(market.Plugins) != 1 || market.Plugins[0].Name != PluginName || market.Plugins[0].Source != "./" {
		t.Fatalf("marketplace.json %s: %v", byPath[".claude-plugin/marketplace.json"], err)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(byPath["hooks/hooks.json"], &hooks); err != nil {
		t.Fatal(err)
	}
	for _, ie := range InstalledEvents {
		g := hooks.Hooks[ie.Event]
		if len(g) != 1 || g[0].Matcher != ie.Matcher || len(g[0].Hooks) != 1 || g[0].Hooks[0].Command != "'/opt/nexus bin/nexus' hook --host claude --managed --plugin "+ie.Event {
			t.Errorf("%s: %+v", ie.Event, g)
		}
	}
	var mcp struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(byPath[".mcp.json"], &mcp); err != nil || mcp.MCPServers[MCPServerName].Command != "/opt/nexus bin/nexus" || mcp.MCPServers[MCPServerName].Args[0] != "mcp" {
		t.Fatalf(".mcp.json %s: %v", byPath[".mcp.json"], err)
	}
	if _, err := PluginFiles(PluginOptions{}); err == nil {
		t.Error("a plugin without an executable was rendered")
	}

	// Written, re-written unchanged, removed with nothing left behind.
	dir := filepath.Join(t.TempDir(), "plugin")
	all := append(files, install.OwnedFile{Path: "agents/architect.md", Content: []byte("a\n")}, install.OwnedFile{Path: "skills/nx-plan/SKILL.md", Content: []byte("p\n")})
	if _, err := WritePlugin(dir, all, InstallOptions{}, true); err != nil {
		t.Fatal(err)
	}
	for p := range byPath {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	changes, err := WritePlugin(dir, all, InstallOptions{}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Changed {
			t.Errorf("rewrite changed %s", ch.Path)
		}
	}
	if _, err := WritePlugin(dir, all, InstallOptions{}, false); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			left = append(left, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("left after removal: %v", left)
	}
}

// TestPluginVersion: the plugin's version is a semantic version for
// every nexus version, a development build's git hash included.
func TestPluginVersion(t *testing.T) {
	for in, want := range map[string]string{
		"0.3.0":                   "0.3.0",
		"v1.2.3":                  "1.2.3",
		"v0.3.0-12-gabc123-dirty": "0.3.0-12-gabc123-dirty",
		"bbf2892":                 "0.0.0-dev+bbf2892",
		"bbf2892-dirty":           "0.0.0-dev+bbf2892-dirty",
		"0.1.0-dev":               "0.1.0-dev",
		"dev":                     "0.0.0-dev+dev",
		"a/b c":                   "0.0.0-dev+a-b-c",
		"":                        "0.0.0-dev",
	} {
		got := PluginVersion(in)
		if got != want || !semver().MatchString(got) {
			t.Errorf("PluginVersion(%q) = %q, want %q (a semantic version)", in, got, want)
		}
	}
}
