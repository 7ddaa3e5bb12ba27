package setup

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// OpenCode's agents are Markdown files in a config folder's agents/
// (.opencode/agents/<id>.md, ~/.config/opencode/agents/<id>.md): YAML
// front matter, then the body, which replaces OpenCode's system prompt in
// the agent's sessions. The file name is the agent's id, the task tool's
// subagent_type. nexus writes description, mode: subagent (only the task
// tool runs them), the model for the role's tier when configured
// ("provider/model"; without one the subagent runs on its caller's
// model), and permission: <key>: deny for what the role may never use,
// which OpenCode then does not offer the agent at all.
//
// Skills are <skill>/SKILL.md in a config folder's skills/, front matter
// name (the folder's name) and description; OpenCode lists them to every
// agent and the skill tool loads one by name.

// Agent is one role rendered for OpenCode.
type Agent struct {
	// ID is the role's id: the file's name and the task tool's
	// subagent_type.
	ID          string
	Description string
	// Body is the agent's system prompt.
	Body string
	// Model is "provider/model" for the role's tier ("" = the caller's).
	Model string
	// Deny are OpenCode permission keys denied to the agent
	// (PermissionDenials).
	Deny []string
}

// Skill is one skill rendered for OpenCode.
type Skill struct {
	ID          string
	Description string
	// Body is the skill's text after the front matter.
	Body string
}

// AgentPath and SkillPath are the files' paths in an OpenCode config
// folder (.opencode, ~/.config/opencode), slash-separated.
func AgentPath(id string) string { return path.Join("agents", id+".md") }
func SkillPath(id string) string { return path.Join("skills", id, "SKILL.md") }

// agentMatter is the front matter nexus writes for an agent; parsing
// refuses anything else, so a file reads back only as written.
type agentMatter struct {
	Description string            `yaml:"description"`
	Mode        string            `yaml:"mode"`
	Model       string            `yaml:"model,omitempty"`
	Permission  map[string]string `yaml:"permission,omitempty"`
}

type skillMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// ModeSubagent is the mode of the agents nexus writes.
const ModeSubagent = "subagent"

// MaxSkillDescription is the longest skill description OpenCode lists.
const MaxSkillDescription = 1024

// AgentMD renders an agent file and checks that it reads back as given.
func AgentMD(a Agent) ([]byte, error) {
	if err := validID(a.ID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Description) == "" {
		return nil, fmt.Errorf("agent %s: the task tool lists agents by their description; it is empty", a.ID)
	}
	if a.Model != "" && !strings.Contains(a.Model, "/") {
		return nil, fmt.Errorf("agent %s: OpenCode names a model provider/model, not %q", a.ID, a.Model)
	}
	for _, f := range []string{a.Description, a.Body, a.Model} {
		if !utf8.ValidString(f) {
			return nil, fmt.Errorf("agent %s: its text is not UTF-8", a.ID)
		}
	}
	fields := []*yaml.Node{scalar("description"), scalar(a.Description), scalar("mode"), scalar(ModeSubagent)}
	if a.Model != "" {
		fields = append(fields, scalar("model"), scalar(a.Model))
	}
	deny := append([]string(nil), a.Deny...)
	sort.Strings(deny)
	if len(deny) > 0 {
		perm := &yaml.Node{Kind: yaml.MappingNode}
		for i, k := range deny {
			if k == "" || i > 0 && deny[i-1] == k {
				return nil, fmt.Errorf("agent %s: permission key %q empty or repeated", a.ID, k)
			}
			perm.Content = append(perm.Content, scalar(k), scalar("deny"))
		}
		fields = append(fields, scalar("permission"), perm)
	}
	b, err := document(&yaml.Node{Kind: yaml.MappingNode, Content: fields}, a.Body)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	back, err := ParseAgentMD(a.ID, b)
	if err != nil || back.Description != a.Description || back.Model != a.Model || back.Body != body(a.Body) || strings.Join(back.Deny, ",") != strings.Join(deny, ",") {
		return nil, fmt.Errorf("agent %s: its file does not read back as written (%v)", a.ID, err)
	}
	return b, nil
}

// ParseAgentMD reads an agent file nexus wrote (id: the file's name); a
// front matter key nexus does not write is an error.
func ParseAgentMD(id string, data []byte) (Agent, error) {
	var m agentMatter
	rest, err := frontMatter(data, &m)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", id, err)
	}
	if m.Mode != ModeSubagent {
		return Agent{}, fmt.Errorf("agent %s: mode %q, nexus writes %q", id, m.Mode, ModeSubagent)
	}
	a := Agent{ID: id, Description: m.Description, Model: m.Model, Body: rest}
	for k, v := range m.Permission {
		if v != "deny" {
			return Agent{}, fmt.Errorf("agent %s: permission %s is %q, nexus writes only deny", id, k, v)
		}
		a.Deny = append(a.Deny, k)
	}
	sort.Strings(a.Deny)
	return a, nil
}

// SkillMD renders a SKILL.md (whitespace in the description collapsed)
// and checks that it reads back as given.
func SkillMD(s Skill) ([]byte, error) {
	if err := validID(s.ID); err != nil {
		return nil, err
	}
	desc := strings.Join(strings.Fields(s.Description), " ")
	switch n := utf8.RuneCountInString(desc); {
	case n == 0:
		return nil, fmt.Errorf("skill %s: OpenCode lists skills by their description; it is empty", s.ID)
	case n > MaxSkillDescription:
		return nil, fmt.Errorf("skill %s: the description has %d characters; OpenCode allows %d", s.ID, n, MaxSkillDescription)
	}
	if !utf8.ValidString(s.Body) {
		return nil, fmt.Errorf("skill %s: its text is not UTF-8", s.ID)
	}
	b, err := document(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("name"), scalar(s.ID), scalar("description"), scalar(desc)}}, s.Body)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", s.ID, err)
	}
	back, err := ParseSkillMD(b)
	if err != nil || back.ID != s.ID || back.Description != desc || back.Body != body(s.Body) {
		return nil, fmt.Errorf("skill %s: its file does not read back as written (%v)", s.ID, err)
	}
	return b, nil
}

// ParseSkillMD reads a SKILL.md nexus wrote.
func ParseSkillMD(data []byte) (Skill, error) {
	var m skillMatter
	rest, err := frontMatter(data, &m)
	if err != nil {
		return Skill{}, err
	}
	return Skill{ID: m.Name, Description: m.Description, Body: rest}, nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// body is the body as a file holds it: ending in one newline.
func body(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// document renders front matter (yaml.v3) and the body: "---", the YAML,
// "---", a blank line, the body ending in one newline.
func document(matter *yaml.Node, text string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(matter); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	buf.WriteString("---\n\n")
	buf.WriteString(body(text))
	return buf.Bytes(), nil
}

// frontMatter decodes a file's front matter strictly into v and returns
// the body after the blank line that follows it.
func frontMatter(data []byte, v any) (string, error) {
	s := string(data)
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", errors.New("no front matter")
	}
	yml, text, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return "", errors.New("the front matter does not end")
	}
	dec := yaml.NewDecoder(strings.NewReader(yml))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return "", fmt.Errorf("front matter: %w", err)
	}
	text, ok = strings.CutPrefix(text, "\n")
	if !ok {
		return "", errors.New("no blank line after the front matter")
	}
	return text, nil
}

// validID checks an agent or skill id: ^[a-z][a-z0-9-]*$, nexus-core's id
// pattern (the ids BareRole keeps as they are), which is also a safe file
// name.
func validID(id string) error {
	if lifecycle.BareRole(id) != id {
		return fmt.Errorf("%q is not a valid id (lower-case letters, digits and '-', starting with a letter)", id)
	}
	return nil
}
