package setup

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-harness/nexus/harness/host/codex"
	nexuscore "github.com/nexus-harness/nexus/third_party/nexus-core"
)

// roleMeta is the part of a distribution agent's or skill's meta.yml the
// tests use.
type roleMeta struct {
	ID          string `yaml:"id"`
	Description string `yaml:"description"`
}

func readRoles(t *testing.T, kind string) map[string][2]string {
	t.Helper()
	core := nexuscore.FS()
	dirs, err := fs.Glob(core, kind+"/*/body.md")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no %s in the distribution: %v", kind, err)
	}
	out := map[string][2]string{}
	for _, body := range dirs {
		dir := path.Dir(body)
		b, err := fs.ReadFile(core, body)
		if err != nil {
			t.Fatal(err)
		}
		m, err := fs.ReadFile(core, dir+"/meta.yml")
		if err != nil {
			t.Fatal(err)
		}
		var meta roleMeta
		if err := yaml.Unmarshal(m, &meta); err != nil {
			t.Fatal(err)
		}
		out[meta.ID] = [2]string{meta.Description, string(b)}
	}
	return out
}

// TestAgentTOMLRoundTrip renders every role of the vendored distribution
// and reads it back as Codex would (no unknown field, name and
// description present): the body survives byte for byte.
func TestAgentTOMLRoundTrip(t *testing.T) {
	roles := readRoles(t, "agents")
	if len(roles) != 9 {
		t.Errorf("%d roles in the distribution, want the nine", len(roles))
	}
	for id, r := range roles {
		a := Agent{ID: id, Description: r[0], Instructions: r[1], Model: "gpt-5.5", ReasoningEffort: "high"}
		b, err := AgentTOML(a)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		back, err := ParseAgentTOML(b)
		if err != nil || back != a {
			t.Errorf("%s does not read back: %v\n got %+v", id, err, back)
		}
		if id == "architect" {
			golden(t, "agents/architect.toml.golden", b)
		}
	}
}

func TestAgentTOMLBodies(t *testing.T) {
	for _, body := range []string{
		"",
		"one line",
		"ends with a newline\n",
		"\n\nstarts with blank lines",
		`quotes """ and ''' and a backslash \ and \n literally`,
		"tabs\tand\r\nCRLF and a control \x01 and U+2028 \u2028 and 😀",
		"trailing backslash \\",
		strings.Repeat("long line ", 5000),
	} {
		a := Agent{ID: "tester", Description: "d", Instructions: body}
		b, err := AgentTOML(a)
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		if back, err := ParseAgentTOML(b); err != nil || back.Instructions != body {
			t.Errorf("%q reads back as %q (%v)", body, back.Instructions, err)
		}
	}
}

func TestAgentTOMLRefuses(t *testing.T) {
	for _, a := range []Agent{
		{ID: "", Description: "d"},
		{ID: "Architect", Description: "d"},
		{ID: "../x", Description: "d"},
		{ID: "architect"},
		{ID: "architect", Description: "d", Instructions: "bad \xff utf-8"},
	} {
		if _, err := AgentTOML(a); err == nil {
			t.Errorf("AgentTOML(%+v) succeeded", a)
		}
	}
	for _, data := range []string{
		"name = \"x\"\ndescription = \"d\"\nunknown = 1\n", // Codex ignores such a file
		"description = \"d\"\n",
		"name = \"x\"\n",
		"name = \"x\"\ndescription = ",
	} {
		if _, err := ParseAgentTOML([]byte(data)); err == nil {
			t.Errorf("ParseAgentTOML(%q) succeeded", data)
		}
	}
}

// frontMatter reads a SKILL.md as Codex's skills loader does: a first line
// "---", the YAML up to the next "---" line.
func frontMatter(t *testing.T, b []byte) (name, desc, body string) {
	t.Helper()
	lines := strings.Split(string(b), "\n")
	if strings.TrimSpace(lines[0]) != "---" {
		t.Fatalf("no front matter: %q", b)
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			var fm struct{ Name, Description string }
			if err := yaml.Unmarshal([]byte(strings.Join(lines[1:i], "\n")), &fm); err != nil {
				t.Fatal(err)
			}
			return fm.Name, fm.Description, strings.Join(lines[i+1:], "\n")
		}
	}
	t.Fatalf("front matter not closed: %q", b)
	return
}

func TestSkillMD(t *testing.T) {
	for id, s := range readRoles(t, "skills") {
		b, err := SkillMD(Skill{ID: id, Description: s[0], Body: s[1]})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		name, desc, body := frontMatter(t, b)
		if name != id || desc != strings.Join(strings.Fields(s[0]), " ") || body != "\n"+strings.TrimRight(s[1], "\n")+"\n" {
			t.Errorf("%s reads back as %q, %q, body %d bytes", id, name, desc, len(body))
		}
		if id == "nx-plan" {
			golden(t, "skills/nx-plan.SKILL.md.golden", b)
		}
	}
	if got := codex.SkillPath("nx-plan"); got != ".agents/skills/nx-plan/SKILL.md" {
		t.Errorf("SkillPath = %s", got)
	}
	if got := AgentPath("architect"); got != "agents/architect.toml" {
		t.Errorf("AgentPath = %s", got)
	}
	// Descriptions YAML must quote, and Codex's limits.
	tricky := "Plan: decide — then act. #not-a-comment 'quotes' \"too\"\nsecond line"
	b, err := SkillMD(Skill{ID: "x", Description: tricky, Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, desc, _ := frontMatter(t, b); desc != strings.Join(strings.Fields(tricky), " ") {
		t.Errorf("description reads back as %q", desc)
	}
	for _, s := range []Skill{
		{ID: "x", Description: "   "},
		{ID: "x", Description: strings.Repeat("d", MaxSkillDescription+1)},
		{ID: strings.Repeat("a", MaxSkillName+1), Description: "d"},
		{ID: "Bad", Description: "d"},
	} {
		if _, err := SkillMD(s); err == nil {
			t.Errorf("SkillMD(%.40q…) succeeded", s.ID+" "+s.Description)
		}
	}
	if _, err := SkillMD(Skill{ID: "x", Description: strings.Repeat("é", MaxSkillDescription)}); err != nil {
		t.Errorf("a description of exactly %d characters: %v", MaxSkillDescription, err)
	}
}
