package claude

import (
	"bytes"
	"flag"
	"github.com/nexus-harness/nexus/harness/install"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/vocabulary"
)

// updateGoldens reports -update (declared by session_test.go, which
// shares this test binary).
func updateGoldens() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// defaultPrefix is mcp.tool_prefix's default.
const defaultPrefix = "nx_"

// renderFiles renders the distribution's catalog for Claude Code (the
// plugin package's names with variant "plugin").
func renderFiles(t *testing.T, core *vocabulary.Core, variant string, o CatalogOptions) []install.OwnedFile {
	t.Helper()
	c, err := catalog.Build(catalog.Options{Core: core, ToolPrefix: defaultPrefix}.WithHost(Host{}.Profile(host.Env{Variant: variant})))
	if err != nil {
		t.Fatal(err)
	}
	files, err := CatalogFiles(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type front struct {
	Name            string `yaml:"name"`
	Description     string `yaml:"description"`
	Model           string `yaml:"model"`
	DisallowedTools string `yaml:"disallowedTools"`
}

func parse(t *testing.T, f install.OwnedFile) (front, string) {
	t.Helper()
	s := string(f.Content)
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		t.Fatalf("%s does not start with frontmatter", f.Path)
	}
	fm, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		t.Fatalf("%s: frontmatter is not closed", f.Path)
	}
	var fr front
	dec := yaml.NewDecoder(strings.NewReader(fm))
	dec.KnownFields(true)
	if err := dec.Decode(&fr); err != nil {
		t.Fatalf("%s: frontmatter: %v", f.Path, err)
	}
	for _, line := range strings.Split(fm, "\n") {
		if strings.HasPrefix(line, " ") {
			t.Errorf("%s: frontmatter value folded onto a second line: %q", f.Path, line)
		}
	}
	return fr, body
}

func TestClaudeRendersEveryAgentAndSkill(t *testing.T) {
	core := loadCore(t)
	files := renderFiles(t, core, "", CatalogOptions{Nexus: "/opt/nexus"})
	byPath := map[string]install.OwnedFile{}
	for _, f := range files {
		byPath[f.Path] = f
		if bytes.Contains(f.Content, []byte("{{")) {
			t.Errorf("%s: unexpanded macro left", f.Path)
		}
	}
	g, _, err := gate.New(gate.Options{Core: core, HostMap: CapabilityMap(), ToolPrefix: defaultPrefix, ToolRefPrefix: MCPToolPrefix})
	if err != nil {
		t.Fatal(err)
	}
	m := core.Manifest()
	if len(m.Agents) != 9 {
		t.Fatalf("distribution has %d agents, the test expects nine", len(m.Agents))
	}
	for _, a := range m.Agents {
		f, ok := byPath["agents/"+a.ID+".md"]
		if !ok {
			t.Errorf("no agent file for %s", a.ID)
			continue
		}
		fr, body := parse(t, f)
		if fr.Name != a.ID {
			t.Errorf("%s: name %q, want the bare role id", f.Path, fr.Name)
		}
		if want := DefaultModels[a.ModelTier]; fr.Model != want {
			t.Errorf("%s: model %q, want %q for tier %s", f.Path, fr.Model, want, a.ModelTier)
		}
		if want := strings.Join(g.HostDenied(a.ID), ", "); fr.DisallowedTools != want {
			t.Errorf("%s: disallowedTools %q, want the gate's %q", f.Path, fr.DisallowedTools, want)
		}
		if !strings.HasPrefix(fr.Description, strings.TrimRight(a.Description, ".")) {
			t.Errorf("%s: description %q", f.Path, fr.Description)
		}
		if !strings.Contains(body, "Reporting to Lead") || !strings.Contains(body, "mcp__nexus__nx_artifact_write") {
			t.Errorf("%s: harness notes missing", f.Path)
		}
	}
	for _, s := range append(m.Skills, vocabulary.Skill{ID: SetupSkill}) {
		f, ok := byPath["skills/"+s.ID+"/SKILL.md"]
		if !ok {
			t.Errorf("no skill file for %s", s.ID)
			continue
		}
		fr, _ := parse(t, f)
		if fr.Name != s.ID || fr.Description == "" {
			t.Errorf("%s: frontmatter %+v", f.Path, fr)
		}
	}
	if want := len(m.Agents) + len(m.Skills) + 1; len(files) != want {
		t.Errorf("%d files, want %d", len(files), want)
	}
	plan := string(byPath["skills/nx-plan/SKILL.md"].Content)
	if !strings.Contains(plan, `subagent_type "researcher"`) || !strings.Contains(plan, "Host notes:") {
		t.Errorf("nx-plan: spawn macro or harness_docs_refs notes missing")
	}
	setup := string(byPath["skills/nx-setup/SKILL.md"].Content)
	for _, want := range []string{"/opt/nexus install claude --scope SCOPE", "--statusline", "nx-init", "doctor", "plugin"} {
		if !strings.Contains(setup, want) {
			t.Errorf("nx-setup lacks %q", want)
		}
	}
}

func TestClaudeGolden(t *testing.T) {
	files := renderFiles(t, loadCore(t), "", CatalogOptions{Nexus: "/opt/nexus"})
	for _, f := range files {
		if f.Path != "agents/architect.md" && f.Path != "agents/engineer.md" && f.Path != "skills/nx-run/SKILL.md" && f.Path != "skills/nx-setup/SKILL.md" {
			continue
		}
		golden := filepath.Join("testdata", "catalog", strings.ReplaceAll(f.Path, "/", "__"))
		if updateGoldens() {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(want, f.Content) {
			t.Errorf("%s differs from %s (run go test -update after checking the change)", f.Path, golden)
		}
	}
}

func TestModelsFromConfig(t *testing.T) {
	models, err := Models(map[string]any{"high": "inherit"})
	if err != nil {
		t.Fatal(err)
	}
	files := renderFiles(t, loadCore(t), "", CatalogOptions{Models: models})
	for _, f := range files {
		if f.Path == "agents/architect.md" {
			if fr, _ := parse(t, f); fr.Model != "inherit" {
				t.Errorf("architect model %q, want inherit", fr.Model)
			}
		}
		if f.Path == "agents/engineer.md" {
			if fr, _ := parse(t, f); fr.Model != "sonnet" {
				t.Errorf("engineer model %q, want the default sonnet", fr.Model)
			}
		}
	}
	if _, err := Models(map[string]any{"high": 3}); err == nil {
		t.Error("a non-string model was accepted")
	}
}

func TestPluginPrefixesAgents(t *testing.T) {
	files := renderFiles(t, loadCore(t), VariantPlugin, CatalogOptions{AgentPrefix: "nexus:"})
	for _, f := range files {
		if f.Path == "skills/nx-plan/SKILL.md" && !strings.Contains(string(f.Content), `subagent_type "nexus:researcher"`) {
			t.Error("plugin skills must spawn nexus:<id>")
		}
	}
}
