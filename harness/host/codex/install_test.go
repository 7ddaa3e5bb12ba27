package codex

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/host"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// userConfig is a user's config.toml nexus must keep byte for byte.
const userConfig = `# my Codex settings
model = "gpt-5.5"   # keep this comment

[projects."/somewhere/else"]
trust_level = "trusted"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
`

// userHooks is a hooks.json with the user's own hook, reviewed already.
const userHooks = `{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit", "timeout": 5}]}
    ]
  }
}
`

type fixture struct {
	t                   *testing.T
	root, home, project string
	env                 map[string]string
	clock               time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "proj"), env: map[string]string{}, clock: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	for _, d := range []string{f.home, f.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) write(p, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(p string) string {
	f.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func testCatalog(t testing.TB) func(lifecycle.HostProfile) (*catalog.Catalog, error) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return func(p lifecycle.HostProfile) (*catalog.Catalog, error) {
		return catalog.Build(catalog.Options{Core: core, ToolPrefix: "nx_"}.WithHost(p))
	}
}

func (f *fixture) request(scope string) installpkg.Request {
	f.clock = f.clock.Add(time.Second) // distinct backup names
	now := f.clock
	return installpkg.Request{
		Scope: scope, Project: f.project, Home: f.home, Command: "/opt/nexus/bin/nexus",
		Catalog: testCatalog(f.t), Decisions: true,
		Getenv:  func(k string) string { return f.env[k] },
		Options: installpkg.Options{Version: "test", Now: func() time.Time { return now }},
	}
}

// snapshot is every regular file under dir (backups aside) and its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, ".nexus-backup-") || strings.Contains(p, "/.git/") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = string(b)
		return nil
	})
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

func TestInstallProject(t *testing.T) {
	f := newFixture(t)
	userCfg := filepath.Join(f.home, ".codex", "config.toml")
	f.write(userCfg, userConfig)
	projCfg := filepath.Join(f.project, ".codex", "config.toml")
	f.write(projCfg, "# project settings\n[features]\nfoo = true\n")
	f.write(filepath.Join(f.project, ".codex", "hooks.json"), userHooks)
	before := snapshot(t, f.root)

	// A dry run writes nothing.
	h := Host{}
	req := f.request(installpkg.ScopeProject)
	req.DryRun = true
	chs, err := h.Install(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed(chs)) == 0 {
		t.Fatal("the dry run found nothing to do")
	}
	if got := snapshot(t, f.root); !mapsEqual(got, before) {
		t.Fatalf("the dry run wrote files")
	}

	chs, err = h.Install(f.request(installpkg.ScopeProject))
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.read(projCfg)
	if !strings.HasPrefix(cfg, "# project settings\n[features]\nfoo = true\n") || !strings.Contains(cfg, `args = ["mcp", "--host", "codex", "--without", "decisions"]`) ||
		!strings.Contains(cfg, `[mcp_servers.nauro]`) {
		t.Errorf("project config.toml:\n%s", cfg)
	}
	if got := f.read(userCfg); got != userConfig {
		t.Errorf("the user's config.toml changed without --trust-hooks:\n%s", got)
	}
	hooks := f.read(filepath.Join(f.project, ".codex", "hooks.json"))
	entries, err := ListHooks(filepath.Join(f.project, ".codex", "hooks.json"), []byte(hooks))
	if err != nil {
		t.Fatal(err)
	}
	var nexus []string
	for _, e := range entries {
		if e.Nexus {
			nexus = append(nexus, e.Key)
		} else if e.Key != filepath.Join(f.project, ".codex", "hooks.json")+":pre_tool_use:0:0" {
			t.Errorf("the user's hook moved to %s", e.Key)
		}
	}
	if len(nexus) != len(InstalledHooks) || !slices.Contains(nexus, filepath.Join(f.project, ".codex", "hooks.json")+":pre_tool_use:1:0") {
		t.Errorf("nexus's hooks: %q", nexus)
	}
	for _, role := range []string{"architect", "engineer", "writer"} {
		a, err := ParseAgentTOML([]byte(f.read(filepath.Join(f.project, ".codex", AgentPath(role)))))
		if err != nil || a.ID != role || !strings.Contains(a.Instructions, "Working in Codex") {
			t.Errorf("agent %s: %+v %v", role, a.ID, err)
		}
	}
	plan := f.read(filepath.Join(f.project, SkillPath("nx-plan")))
	if !strings.HasPrefix(plan, "---\nname: nx-plan\n") || !strings.Contains(plan, "spawn_agent") {
		t.Errorf("nx-plan SKILL.md starts %.200q", plan)
	}
	var notes string
	for _, c := range chs {
		notes += strings.Join(c.Notes, "\n")
	}
	if !strings.Contains(notes, "/hooks") || !strings.Contains(notes, "--trust-hooks") || !strings.Contains(notes, "trusted project") {
		t.Errorf("install did not say how to trust the hooks and the project:\n%s", notes)
	}

	// A second install changes no file.
	installed := snapshot(t, f.root)
	chs, err = h.Install(f.request(installpkg.ScopeProject))
	if err != nil || len(changed(chs)) > 0 {
		t.Fatalf("second install changed %v (%v)", changed(chs), err)
	}
	if got := snapshot(t, f.root); !mapsEqual(got, installed) {
		t.Error("second install rewrote files")
	}

	// Uninstall leaves exactly what was there before: config.toml byte for
	// byte, hooks.json (which nexus writes as JSON with two-space
	// indentation) the same document.
	if _, err := h.Uninstall(f.request(installpkg.ScopeProject)); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, f.root)
	hp := filepath.Join(f.project, ".codex", "hooks.json")
	if !sameJSON(t, got[hp], before[hp]) {
		t.Errorf("hooks.json after uninstall:\n%s", got[hp])
	}
	got[hp] = before[hp]
	if !mapsEqual(got, before) {
		t.Errorf("uninstall left a difference:\n got %v\nwant %v", keys(got), keys(before))
		for p, c := range before {
			if got[p] != c {
				t.Errorf("%s:\n%s\nwant\n%s", p, got[p], c)
			}
		}
	}
}

func TestTrustHooks(t *testing.T) {
	f := newFixture(t)
	// The project is reached through a symlink: Codex keys hooks by the
	// resolved path.
	link := filepath.Join(f.root, "link")
	if err := os.Symlink(f.project, link); err != nil {
		t.Fatal(err)
	}
	userCfg := filepath.Join(f.home, ".codex", "config.toml")
	f.write(userCfg, userConfig)
	f.write(filepath.Join(f.project, ".codex", "hooks.json"), userHooks)
	h := Host{}
	req := f.request(installpkg.ScopeProject)
	req.Project, req.TrustHooks = link, true
	if _, err := h.Install(req); err != nil {
		t.Fatal(err)
	}
	hooksPath := filepath.Join(f.project, ".codex", "hooks.json")
	entries, err := ListHooks(hooksPath, []byte(f.read(hooksPath)))
	if err != nil {
		t.Fatal(err)
	}
	info, err := InspectConfig([]byte(f.read(userCfg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		st, ok := info.Hooks[e.Key]
		switch {
		case e.Nexus && (!ok || st.TrustedHash != e.Hash):
			t.Errorf("nexus hook %s not trusted (%+v)", e.Key, st)
		case !e.Nexus && ok:
			t.Errorf("the user's hook %s got a trust entry from nexus", e.Key)
		}
	}
	if len(info.Hooks) != len(InstalledHooks) {
		t.Errorf("%d trust entries, want %d: %v", len(info.Hooks), len(InstalledHooks), info.Hooks)
	}
	if got := f.read(userCfg); !strings.HasPrefix(got, userConfig) {
		t.Errorf("the user's config.toml lost bytes:\n%s", got)
	}
	if u := UntrustedHooks(info, entries); len(u) != 1 || u[0].Nexus {
		t.Errorf("untrusted hooks: %+v", u)
	}

	// A new executable changes the hooks' hashes: the old entries go, the
	// new ones come (with --trust-hooks), nothing else changes.
	req = f.request(installpkg.ScopeProject)
	req.Project, req.TrustHooks, req.Command = link, true, "/usr/bin/nexus"
	if _, err := h.Install(req); err != nil {
		t.Fatal(err)
	}
	info, _ = InspectConfig([]byte(f.read(userCfg)))
	entries, _ = ListHooks(hooksPath, []byte(f.read(hooksPath)))
	if u := UntrustedHooks(info, entries); len(u) != 1 || len(info.Hooks) != len(InstalledHooks) {
		t.Errorf("after a new command: untrusted %d, entries %d", len(u), len(info.Hooks))
	}

	// Uninstall removes the trust it wrote, and only that.
	req = f.request(installpkg.ScopeProject)
	req.Project = link
	if _, err := h.Uninstall(req); err != nil {
		t.Fatal(err)
	}
	if got := f.read(userCfg); got != userConfig {
		t.Errorf("the user's config.toml after uninstall:\n%s", got)
	}
}

func TestInstallUserScope(t *testing.T) {
	f := newFixture(t)
	codexHome := filepath.Join(f.root, "codexhome")
	f.env[HomeEnv] = codexHome
	// The user keeps config.toml in a dotfiles folder.
	dot := filepath.Join(f.root, "dotfiles", "codex.toml")
	f.write(dot, userConfig)
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(codexHome, "config.toml")); err != nil {
		t.Fatal(err)
	}
	h := Host{}
	req := f.request(installpkg.ScopeUser)
	req.TrustHooks = true
	if _, err := h.Install(req); err != nil {
		t.Fatal(err)
	}
	cfg := f.read(dot)
	if !strings.HasPrefix(cfg, userConfig) || !strings.Contains(cfg, "[mcp_servers.nexus]") || !strings.Contains(cfg, codexHome+"/hooks.json:session_end:0:0") {
		t.Errorf("config.toml through the symlink:\n%s", cfg)
	}
	for _, p := range []string{filepath.Join(codexHome, "hooks.json"), filepath.Join(codexHome, AgentPath("architect")), filepath.Join(f.home, SkillPath("nx-run")), filepath.Join(codexHome, installpkg.RecordName), filepath.Join(f.home, ".agents", installpkg.RecordName)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("user install: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.home, ".codex")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("~/.codex was written although CODEX_HOME is set (%v)", err)
	}
	if _, err := h.Uninstall(f.request(installpkg.ScopeUser)); err != nil {
		t.Fatal(err)
	}
	if got := f.read(dot); got != userConfig {
		t.Errorf("config.toml after uninstall:\n%s", got)
	}
}

// A cloned repository shipping .codex or .agents as a symlink leading out
// of the project gets nothing written through it.
func TestInstallRefusesSymlinks(t *testing.T) {
	for _, dir := range []string{".codex", ".agents", ".codex/agents"} {
		t.Run(dir, func(t *testing.T) {
			f := newFixture(t)
			outside := filepath.Join(f.root, "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(f.project, dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(f.project, dir)); err != nil {
				t.Fatal(err)
			}
			_, err := Host{}.Install(f.request(installpkg.ScopeProject))
			var se *installpkg.SymlinkError
			if !errors.As(err, &se) {
				t.Fatalf("install through %s: %v", dir, err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 0 {
				t.Errorf("wrote %d files through the symlink", len(ents))
			}
		})
	}
}

func TestModels(t *testing.T) {
	m, err := Models(map[string]any{"high": "gpt-5.6-sol:high", "standard": "inherit"})
	if err != nil || m["high"] != (Agent{Model: "gpt-5.6-sol", ReasoningEffort: "high"}) || len(m) != 1 {
		t.Errorf("Models = %+v, %v", m, err)
	}
	if _, err := Models(map[string]any{"high": 5}); err == nil || !strings.Contains(err.Error(), "codex.models.high") {
		t.Errorf("a number as a model: %v", err)
	}
	f := newFixture(t)
	req := f.request(installpkg.ScopeProject)
	req.Models = map[string]any{"high": "gpt-5.6-sol:high"}
	agents, _, _, err := Host{}.CatalogFiles(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		parsed, err := ParseAgentTOML(a.Content)
		if err != nil {
			t.Fatal(err)
		}
		high := slices.Contains([]string{"architect", "designer", "postdoc", "strategist"}, parsed.ID) // model_tier high
		if high != (parsed.Model == "gpt-5.6-sol" && parsed.ReasoningEffort == "high") {
			t.Errorf("%s: model %q effort %q", parsed.ID, parsed.Model, parsed.ReasoningEffort)
		}
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
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

// What nexus renders for Codex names Codex's mechanisms (spawn_agent with
// agent_type, skill files read by path), never Claude Code's.
func TestWordingIsCodexs(t *testing.T) {
	f := newFixture(t)
	agents, skills, _, err := Host{}.CatalogFiles(f.request(installpkg.ScopeProject))
	if err != nil {
		t.Fatal(err)
	}
	claudeWords := []string{"Agent tool", "Skill tool", "TodoWrite", "AskUserQuestion", "subagent_type", "SendMessage"}
	spawn := false
	for _, file := range append(agents, skills...) {
		text := string(file.Content)
		for _, w := range claudeWords {
			if strings.Contains(text, w) {
				t.Errorf("%s names %q", file.Path, w)
			}
		}
		spawn = spawn || strings.Contains(text, "spawn_agent (agent_type")
	}
	if !spawn {
		t.Error("no rendered file says how to spawn a role with spawn_agent")
	}
	p := Host{}.Profile(hostEnv(f.project))
	if !strings.Contains(p.SpawnRoles, "spawn_agent") || p.SkillTool != "" || p.TextUnits != lifecycle.Bytes || p.ContextBudget != MaxContextBytes {
		t.Errorf("profile %+v", p)
	}
	// A long skill is named by its file, once installed.
	if _, ok := p.SkillLoader("nx-plan"); ok {
		t.Error("SkillLoader names a skill file that is not installed")
	}
	f.write(filepath.Join(f.project, SkillPath("nx-plan")), "---\nname: nx-plan\ndescription: x\n---\nbody\n")
	p = Host{}.Profile(hostEnv(f.project))
	if how, ok := p.SkillLoader("nx-plan"); !ok || !strings.Contains(how, "cat "+filepath.Join(f.project, ".agents/skills/nx-plan/SKILL.md")) {
		t.Errorf("SkillLoader(nx-plan) = %q, %v", how, ok)
	}
}

func hostEnv(project string) host.Env { return host.Env{Project: project} }
