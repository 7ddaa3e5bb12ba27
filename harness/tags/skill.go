package tags

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/vocabulary"
)

// Spelling is how one host spells the abstract primitives that skill
// bodies use ({{subagent_spawn ...}} and friends) and the host notes skills
// ask for through harness_docs_refs. A host package supplies its own; nil
// (or a primitive it leaves unspelled) gets the neutral spelling.
type Spelling struct {
	// Host names the host.
	Host string
	// Macro spells one primitive for the host: m is the macro, agentPrefix
	// goes before role ids where the host names agents. "" leaves the
	// primitive to the neutral spelling. skill_activation is always
	// spelled by nexus (the tag that activates the skill).
	Macro func(m Macro, agentPrefix string) string
	// Docs are the host's notes per harness_docs_refs key.
	Docs map[string]string
	// Note, when set, gives the note that follows every activated skill
	// body, for the tool prefix in use.
	Note func(toolPrefix string) string
}

// Profile is a Spelling at work: with the distribution's tags (for
// skill_activation), the tool prefix and the agent prefix in use.
type Profile struct {
	Host     string
	spelling *Spelling
	trigger  func(skill, mode string) string
	note     string
	// AgentPrefix is put before role ids in subagent_spawn (a host that
	// names a plugin's agents "<plugin>:<id>"); "" for agent files
	// installed on their own.
	AgentPrefix string
}

// NewProfile returns the profile of a spelling (nil: the neutral one). The
// detector supplies the trigger tags skill_activation falls back to.
func NewProfile(sp *Spelling, d *Detector, toolPrefix string) *Profile {
	p := &Profile{Host: "neutral", spelling: sp}
	if sp != nil {
		p.Host = sp.Host
		if sp.Note != nil {
			p.note = sp.Note(toolPrefix)
		}
	}
	p.trigger = func(skill, mode string) string {
		for _, t := range d.Tags() {
			if t.Type != vocabulary.TagSkill || t.Skill != skill {
				continue
			}
			if mode != "" {
				for _, v := range t.Variants {
					if v == mode || v == "*" {
						return strings.TrimSuffix(t.Trigger, "]") + ":" + mode + "]"
					}
				}
			}
			return t.Trigger
		}
		return ""
	}
	return p
}

// Render spells one macro for the host.
func (p *Profile) Render(m Macro) string {
	if m.ID == "skill_activation" {
		if tg := p.trigger(m.Params["skill"], m.Params["mode"]); tg != "" {
			return tg
		}
		s := "the " + m.Params["skill"] + " skill"
		if mode := m.Params["mode"]; mode != "" {
			s += " in " + mode + " mode"
		}
		return s
	}
	if p.spelling != nil && p.spelling.Macro != nil {
		if s := p.spelling.Macro(m, p.AgentPrefix); s != "" {
			return s
		}
	}
	return neutral(m)
}

// Doc returns the host's note for a harness_docs_refs key ("" if none).
func (p *Profile) Doc(ref string) string {
	if p.spelling == nil {
		return ""
	}
	return p.spelling.Docs[ref]
}

// neutral is the spelling of a host nexus knows nothing of.
func neutral(m Macro) string {
	switch m.ID {
	case "subagent_spawn":
		s := fmt.Sprintf("spawn a %q subagent", m.Params["target_role"])
		if n := m.Params["name"]; n != "" {
			s += fmt.Sprintf(" named %q", n)
		}
		prompt := m.Params["prompt"]
		if strings.Contains(prompt, "\n") {
			return s + " with this prompt:\n" + prompt
		}
		return s + fmt.Sprintf(" with the prompt %q", prompt)
	case "task_register":
		return fmt.Sprintf("(progress: %q → %s)", m.Params["label"], m.Params["state"])
	case "user_question":
		return fmt.Sprintf("ask the user %q, offering %s as a numbered list", m.Params["question"], m.Params["options"])
	}
	return ""
}

// SkillText is an activated skill, ready to inject.
type SkillText struct {
	Skill string
	Mode  string
	Text  string
	// ExpandErr is set when a macro of the body is malformed or unknown:
	// Text is then the raw body behind a warning (nexus-core: the expander
	// must fail loudly).
	ExpandErr error
}

// ActivateSkill reads a skill's body.md, expands its macros for the host and
// appends the host notes its harness_docs_refs ask for.
func ActivateSkill(core *vocabulary.Core, skillID, mode string, p *Profile) (SkillText, error) {
	body, expandErr, err := RenderSkill(core, skillID, p)
	if err != nil {
		return SkillText{}, err
	}
	st := SkillText{Skill: skillID, Mode: mode, ExpandErr: expandErr}
	var b strings.Builder
	fmt.Fprintf(&b, "nexus activated the %s skill", skillID)
	if mode != "" {
		fmt.Fprintf(&b, " in %s mode", mode)
	}
	b.WriteString(". Follow these instructions:\n\n")
	b.WriteString(body)
	st.Text = b.String()
	return st, nil
}

// RenderSkill is a skill's instructions for the host: body.md with its
// macros expanded, the profile's note and the host notes its
// harness_docs_refs ask for. expandErr is set when a macro is malformed or
// unknown; the body is then shown unexpanded behind a warning (nexus-core:
// the expander must fail loudly). err means the body could not be read.
func RenderSkill(core *vocabulary.Core, skillID string, p *Profile) (text string, expandErr, err error) {
	body, err := core.ReadSkillBody(skillID)
	if err != nil {
		return "", nil, err
	}
	known := map[string]bool{}
	for _, inv := range core.Manifest().Vocabulary.Invocations {
		known[inv.ID] = true
	}
	expanded, err := Expand(body, known, p.Render)
	if err != nil {
		expandErr = fmt.Errorf("skills/%s/body.md: %w", skillID, err)
		expanded = fmt.Sprintf("(nexus could not expand the macros of this skill body: %v; it is shown unexpanded)\n\n%s", expandErr, body)
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(expanded, "\n"))
	b.WriteString("\n")
	if p.note != "" {
		b.WriteString("\n" + p.note + "\n")
	}
	if s, ok := core.Skill(skillID); ok && len(s.HarnessDocsRefs) > 0 {
		refs := append([]string(nil), s.HarnessDocsRefs...)
		sort.Strings(refs)
		var notes []string
		for _, r := range refs {
			if d := p.Doc(r); d != "" {
				notes = append(notes, "- "+d)
			}
		}
		if len(notes) > 0 {
			b.WriteString("\nHost notes:\n")
			b.WriteString(strings.Join(notes, "\n"))
			b.WriteString("\n")
		}
	}
	return b.String(), expandErr, nil
}
