package setup

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// Codex's custom agents are one TOML file each, in <project>/.codex/agents/
// or ~/.codex/agents/: name and description (required) and
// developer_instructions, plus optional model settings. Codex ignores a
// file with any other field, or without a name or a description, with an
// error item in its --json output. The name is what spawn_agent's
// agent_type takes; the file name does not matter to Codex.
//
// Skills are SKILL.md files with YAML front matter (name, description) in
// <project>/.agents/skills/<dir>/ or ~/.agents/skills/<dir>/; Codex lists
// each to the model as "<name>: <description> (file: <path>)" and the
// model reads the file itself (there is no skill tool). Codex collapses
// whitespace in both fields and refuses a name over 64 characters or a
// description over 1,024 (codex-rs core skills loader).

// Agent is one role rendered for Codex.
type Agent struct {
	// ID is the role's id: the agent's name and agent_type.
	ID          string
	Description string
	// Instructions is the role's body: developer_instructions, the first
	// thing in the subagent's second developer message.
	Instructions string
	// Model is the model for the role's tier ("" = Codex's default).
	Model string
	// ReasoningEffort is model_reasoning_effort ("" = the model's default).
	ReasoningEffort string
}

// agentFile is the TOML of an agent file: only fields Codex accepts.
type agentFile struct {
	Name                  string `toml:"name"`
	Description           string `toml:"description"`
	DeveloperInstructions string `toml:"developer_instructions,multiline"`
	Model                 string `toml:"model,omitempty"`
	ModelReasoningEffort  string `toml:"model_reasoning_effort,omitempty"`
}

// AgentPath is an agent file's path in a Codex folder (.codex, ~/.codex),
// slash-separated.
func AgentPath(id string) string { return "agents/" + id + ".toml" }

// AgentTOML renders an agent file (go-toml; the body as a multi-line
// string) and checks that it reads back as given.
func AgentTOML(a Agent) ([]byte, error) {
	if err := validRole(a.ID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Description) == "" {
		return nil, fmt.Errorf("agent %s: Codex ignores an agent without a description", a.ID)
	}
	for _, f := range []string{a.Description, a.Instructions, a.Model, a.ReasoningEffort} {
		if !utf8.ValidString(f) {
			return nil, fmt.Errorf("agent %s: its text is not UTF-8", a.ID)
		}
	}
	f := agentFile{Name: a.ID, Description: a.Description, DeveloperInstructions: a.Instructions, Model: a.Model, ModelReasoningEffort: a.ReasoningEffort}
	b, err := toml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	back, err := ParseAgentTOML(b)
	if err != nil || back != a {
		return nil, fmt.Errorf("agent %s: its TOML does not read back as written (%v)", a.ID, err)
	}
	return b, nil
}

// ParseAgentTOML reads an agent file as Codex would: a field it does not
// know, or a missing name or description, is an error.
func ParseAgentTOML(data []byte) (Agent, error) {
	var f agentFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Agent{}, err
	}
	if strings.TrimSpace(f.Name) == "" || strings.TrimSpace(f.Description) == "" {
		return Agent{}, fmt.Errorf("an agent file needs a name and a description")
	}
	return Agent{ID: f.Name, Description: f.Description, Instructions: f.DeveloperInstructions, Model: f.Model, ReasoningEffort: f.ModelReasoningEffort}, nil
}

// Skill is one skill rendered for Codex.
type Skill struct {
	ID          string
	Description string
	// Body is the skill's text after the front matter.
	Body string
}

// Codex's limits on a skill's front matter, in characters, after it
// collapses whitespace.
const (
	MaxSkillName        = 64
	MaxSkillDescription = 1024
)

// SkillMD renders a SKILL.md: YAML front matter with name and description
// (yaml.v3), a blank line, the body ending in one newline. A description
// over Codex's limit is an error (Codex would skip the skill).
func SkillMD(s Skill) ([]byte, error) {
	if err := validRole(s.ID); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(s.ID); n > MaxSkillName {
		return nil, fmt.Errorf("skill %s: the name has %d characters; Codex allows %d", s.ID, n, MaxSkillName)
	}
	desc := strings.Join(strings.Fields(s.Description), " ")
	switch n := utf8.RuneCountInString(desc); {
	case n == 0:
		return nil, fmt.Errorf("skill %s: Codex skips a skill without a description", s.ID)
	case n > MaxSkillDescription:
		return nil, fmt.Errorf("skill %s: the description has %d characters; Codex allows %d", s.ID, n, MaxSkillDescription)
	}
	node := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "name"}, {Kind: yaml.ScalarNode, Value: s.ID},
		{Kind: yaml.ScalarNode, Value: "description"}, {Kind: yaml.ScalarNode, Value: desc},
	}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, fmt.Errorf("skill %s: %w", s.ID, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out := append([]byte("---\n"), buf.Bytes()...)
	out = append(out, "---\n\n"...)
	return append(out, strings.TrimRight(s.Body, "\n")+"\n"...), nil
}

// validRole checks an agent or skill id: ^[a-z][a-z0-9-]*$, nexus-core's
// id pattern, which is also a safe file name.
func validRole(id string) error {
	ok := id != "" && id[0] >= 'a' && id[0] <= 'z'
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%q is not a valid id (lower-case letters, digits and '-', starting with a letter)", id)
	}
	return nil
}
