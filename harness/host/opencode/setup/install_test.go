package setup_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailscale/hujson"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/host/opencode/setup"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

const exe = "/opt/nexus/bin/nexus"

// installReq is a request for a scope of a fresh project and home.
func installReq(t *testing.T, scope string) (installpkg.Request, string, string) {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return installpkg.Request{
		Scope: scope, Project: proj, Home: home, Command: exe, Decisions: true,
		Getenv: func(string) string { return "" },
		Catalog: func(p lifecycle.HostProfile) (*catalog.Catalog, error) {
			return catalog.Build(catalog.Options{Core: core, ToolPrefix: "nx_"}.WithHost(p))
		},
		Options: installpkg.Options{Version: "test"},
	}, proj, home
}

// tree lists every file under dir with its content (backups aside).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.Contains(p, ".nexus-backup-") {
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func changed(chs []installpkg.Change) []string {
	var out []string
	for _, c := range chs {
		if c.Changed {
			out = append(out, c.Path)
		}
	}
	return out
}

// userConfig is a user's opencode.json with comments, trailing commas and
// keys of its own.
const userConfig = `{
  // my settings
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "mcp": {
    "github": {"type": "remote", "url": "https://example.com/mcp"}, // mine
  },
}
`

// TestInstallProject: a project install writes the plugin, the MCP
// entries (every other byte of opencode.json kept), the nine agents and
// the skills, recorded; a second install changes nothing; uninstall gives
// back exactly what was there.
func TestInstallProject(t *testing.T) {
	req, proj, _ := installReq(t, installpkg.ScopeProject)
	if err := os.WriteFile(filepath.Join(proj, "opencode.json"), []byte(userConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(proj, ".opencode", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(proj, ".opencode", "agents", "mine.md")
	if err := os.WriteFile(mine, []byte("---\ndescription: mine\n---\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, proj)
	h := setup.Host{}
	chs, err := h.Install(req)
	if err != nil {
		t.Fatal(err)
	}
	after := tree(t, proj)
	var agents, skills int
	for p := range after {
		switch {
		case strings.HasPrefix(p, ".opencode/agents/") && p != ".opencode/agents/mine.md":
			agents++
		case strings.HasPrefix(p, ".opencode/skills/") && strings.HasSuffix(p, "/SKILL.md"):
			skills++
		}
	}
	if agents != 9 || skills != 4 {
		t.Errorf("%d agents and %d skills written, want 9 and 4: %v", agents, skills, changed(chs))
	}
	plugin := after[".opencode/plugins/nexus.js"]
	for _, want := range []string{`const NEXUS = "` + exe + `"`, `const PROJECT = "` + proj + `"`, `["hook","--host","opencode","--serve","--project","` + proj + `"]`} {
		if !strings.Contains(plugin, want) {
			t.Errorf("the plugin lacks %s", want)
		}
	}
	var rec installpkg.Record
	if err := json.Unmarshal([]byte(after[".opencode/nexus-install.json"]), &rec); err != nil || len(rec.Files) != 14 || rec.Core == "" {
		t.Errorf("record %+v (%v), want 14 files and the nexus-core version", rec, err)
	}
	if after[".opencode/agents/mine.md"] != before[".opencode/agents/mine.md"] {
		t.Error("the user's own agent changed")
	}
	// opencode.json: the user's bytes, plus exactly nexus's two entries.
	cfg := after["opencode.json"]
	for _, keep := range []string{"// my settings", `"theme": "tokyonight"`, `{"type": "remote", "url": "https://example.com/mcp"}, // mine`} {
		if !strings.Contains(cfg, keep) {
			t.Errorf("opencode.json lost %q:\n%s", keep, cfg)
		}
	}
	v, err := hujson.Standardize([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		MCP map[string]struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(v, &parsed); err != nil {
		t.Fatal(err)
	}
	if got := parsed.MCP["nexus"]; got.Type != "local" || !slices.Equal(got.Command, []string{exe, "mcp", "--host", "opencode", "--without", "decisions"}) {
		t.Errorf("mcp.nexus %+v", got)
	}
	if got := parsed.MCP["nauro"]; !slices.Equal(got.Command, []string{exe, "mcp", "--host", "opencode", "--only", "decisions"}) {
		t.Errorf("mcp.nauro %+v", got)
	}
	// The architect: its permissions, and no model (opencode.models unset).
	arch := after[".opencode/agents/architect.md"]
	if !strings.Contains(arch, "permission:\n  edit: deny\n  nexus_nx_task_add: deny") || strings.Contains(arch, "\nmodel:") || !strings.Contains(arch, "## Working in OpenCode") {
		t.Errorf("architect.md:\n%s", arch[:min(len(arch), 600)])
	}
	if strings.Contains(after[".opencode/skills/nx-plan/SKILL.md"], "Agent tool") {
		t.Error("nx-plan names Claude Code's Agent tool")
	}
	if !strings.Contains(after[".opencode/skills/nx-plan/SKILL.md"], "task tool (subagent_type") {
		t.Error("nx-plan does not spawn through OpenCode's task tool")
	}

	// Again: nothing changes.
	chs, err = h.Install(req)
	if err != nil {
		t.Fatal(err)
	}
	if c := changed(chs); len(c) > 0 {
		t.Errorf("a second install changed %v", c)
	}
	if again := tree(t, proj); !mapsEqual(again, after) {
		t.Error("a second install changed the files")
	}
	// Uninstall: exactly what was there before.
	if _, err := h.Uninstall(req); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, proj); !mapsEqual(got, before) {
		t.Errorf("after uninstall the project has %v, want %v", keys(got), keys(before))
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestInstallUser: the user scope writes into $XDG_CONFIG_HOME/opencode
// (else ~/.config/opencode), with a plugin that serves the folder OpenCode
// runs in; an opencode.json it created goes with uninstall.
func TestInstallUser(t *testing.T) {
	for _, xdg := range []bool{false, true} {
		req, _, home := installReq(t, installpkg.ScopeUser)
		dir := filepath.Join(home, ".config", "opencode")
		if xdg {
			x := filepath.Join(home, "xdg")
			req.Getenv = func(k string) string {
				if k == setup.ConfigHomeEnv {
					return x
				}
				return ""
			}
			dir = filepath.Join(x, "opencode")
		}
		h := setup.Host{}
		if _, err := h.Install(req); err != nil {
			t.Fatal(err)
		}
		got := tree(t, home)
		rel, _ := filepath.Rel(home, dir)
		rel = filepath.ToSlash(rel)
		for _, want := range []string{"/opencode.json", "/plugins/nexus.js", "/agents/architect.md", "/skills/nx-plan/SKILL.md", "/nexus-install.json"} {
			if _, ok := got[rel+want]; !ok {
				t.Errorf("xdg %v: no %s%s in %v", xdg, rel, want, keys(got))
			}
		}
		if p := got[rel+"/plugins/nexus.js"]; !strings.Contains(p, `const PROJECT = ""`) || strings.Contains(p, "--project") {
			t.Error("the user's plugin names a project")
		}
		if _, err := h.Uninstall(req); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, home); len(got) != 0 {
			t.Errorf("xdg %v: uninstall left %v", xdg, keys(got))
		}
	}
}

// TestInstallLeavesOthersAlone: a dry run writes nothing; an agent edited
// since install, and an MCP entry named nexus that runs something else, are
// left alone; a symlink on the way is refused.
func TestInstallLeavesOthersAlone(t *testing.T) {
	req, proj, _ := installReq(t, installpkg.ScopeProject)
	h := setup.Host{}
	dry := req
	dry.DryRun = true
	chs, err := h.Install(dry)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed(chs)) == 0 {
		t.Error("the dry run reports no change")
	}
	if got := tree(t, proj); len(got) != 0 {
		t.Fatalf("the dry run wrote %v", keys(got))
	}
	if _, err := h.Install(req); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(proj, ".opencode", "agents", "architect.md")
	if err := os.WriteFile(arch, []byte("my own architect\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chs, err = h.Uninstall(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(arch); string(b) != "my own architect\n" {
		t.Error("uninstall removed an agent edited since install")
	}
	if !slices.ContainsFunc(chs, func(c installpkg.Change) bool {
		return c.Path == arch && len(c.Notes) > 0 && strings.Contains(c.Notes[0], "edited")
	}) {
		t.Errorf("uninstall did not name the edited agent: %+v", chs)
	}
	if _, err := os.Stat(filepath.Join(proj, "opencode.json")); err == nil {
		t.Error("uninstall left the opencode.json install created")
	}

	// Another tool's server named nexus.
	other := `{"mcp": {"nexus": {"type": "local", "command": ["/usr/bin/other", "serve"]}}}` + "\n"
	if err := os.WriteFile(filepath.Join(proj, "opencode.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	chs, err = h.Install(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "opencode.json")); !bytes.Contains(b, []byte(`"/usr/bin/other"`)) {
		t.Errorf("install replaced another tool's server: %s", b)
	}
	if !slices.ContainsFunc(chs, func(c installpkg.Change) bool {
		return len(c.Notes) > 0 && strings.Contains(c.Notes[0], "does not run nexus")
	}) {
		t.Errorf("install did not say it left the server alone: %+v", chs)
	}

	// .opencode leading out of the project.
	req2, proj2, _ := installReq(t, installpkg.ScopeProject)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(proj2, ".opencode")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(req2); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("install through a symlinked .opencode: %v", err)
	}
	if got := tree(t, outside); len(got) != 0 {
		t.Errorf("wrote through the symlink: %v", keys(got))
	}
}

func TestModels(t *testing.T) {
	req, proj, _ := installReq(t, installpkg.ScopeProject)
	req.Models = map[string]any{"high": "anthropic/claude-opus-4-1", "standard": "inherit"}
	if _, err := (setup.Host{}).Install(req); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(proj, ".opencode", "agents", "architect.md"))
	if !strings.Contains(string(b), "\nmodel: anthropic/claude-opus-4-1\n") {
		t.Errorf("architect (high tier) has no model:\n%s", b[:min(len(b), 300)])
	}
	for _, bad := range []any{"opus", 3, "anthropic/"} {
		if _, err := setup.Models(map[string]any{"high": bad}); err == nil || !strings.Contains(err.Error(), "opencode.models.high") {
			t.Errorf("opencode.models.high %v: %v", bad, err)
		}
	}
}
