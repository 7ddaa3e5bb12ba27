package tags

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/vocabulary"
)

// Profile is how one host spells the abstract primitives that skill bodies
// use ({{subagent_spawn ...}} and friends) and the harness-specific notes
// skills ask for through harness_docs_refs.
type Profile struct {
	Host   string
	render func(m Macro) string
	docs   map[string]string
	// note follows every activated skill body.
	note string
	// AgentPrefix is put before role ids in subagent_spawn (Claude Code
	// names a plugin's agents "<plugin>:<id>"); "" for agent files
	// installed into .claude/agents.
	AgentPrefix string
}

// Render spells one macro for the host.
func (p *Profile) Render(m Macro) string { return p.render(m) }

// Doc returns the host's note for a harness_docs_refs key ("" if none).
func (p *Profile) Doc(ref string) string { return p.docs[ref] }

// ProfileFor returns the profile of a host ("claude" or "neutral"). The
// detector supplies the trigger tags skill_activation falls back to.
func ProfileFor(host string, d *Detector, toolPrefix string) *Profile {
	trigger := func(skill, mode string) string {
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
	activation := func(m Macro) string {
		if tg := trigger(m.Params["skill"], m.Params["mode"]); tg != "" {
			return tg
		}
		s := "the " + m.Params["skill"] + " skill"
		if mode := m.Params["mode"]; mode != "" {
			s += " in " + mode + " mode"
		}
		return s
	}
	if host == "claude" {
		p := &Profile{Host: host}
		p.render = func(m Macro) string {
			switch m.ID {
			case "skill_activation":
				return activation(m)
			case "subagent_spawn":
				role := m.Params["target_role"]
				if role == "explore" {
					role = "Explore" // Claude Code's built-in code explorer
				} else {
					role = p.AgentPrefix + role
				}
				s := fmt.Sprintf("Agent tool (subagent_type %q", role)
				if n := m.Params["name"]; n != "" {
					s += fmt.Sprintf(", description %q", n)
				}
				if h := m.Params["resume_tier_hint"]; h != "" {
					s += ", resume tier " + h
				}
				prompt := m.Params["prompt"]
				if strings.Contains(prompt, "\n") {
					return s + ") with this prompt:\n" + prompt
				}
				return s + fmt.Sprintf(", prompt %q)", prompt)
			case "task_register":
				return fmt.Sprintf("TodoWrite item %q → %s", m.Params["label"], m.Params["state"])
			case "user_question":
				return fmt.Sprintf("AskUserQuestion (question %q, options %s)", m.Params["question"], m.Params["options"])
			}
			return ""
		}
		p.docs = map[string]string{
			"resume_invocation":     "Resuming a subagent in Claude Code: where your Claude Code version can resume a finished subagent by its agent id (the Agent tool's resume parameter, or SendMessage when agent teams are on), use the agent_id that nexus records in .nexus/state/<harness-id>/agent-tracker.json. When resuming is not possible, spawn a fresh subagent without comment (nexus-core's resume gating). A bounded-tier agent resumed for the same artifact must be told to re-read its target files first.",
			"instruction_file":      "Claude Code's project instruction file is CLAUDE.md at the project root.",
			"slash_command_display": "In Claude Code, skills are typed as bracket tags ([plan], [run], [sync]); once `nexus install claude` has installed them they are also slash commands (/nx-plan, /nx-run, /nx-sync, /nx-init; nx-init has no tag).",
		}
		p.note = fmt.Sprintf("Tools named %s* in these instructions are nexus's MCP tools; Claude Code lists them as mcp__<server>__%s* (mcp__nexus__%splan_start with the server `nexus install claude` registers).", toolPrefix, toolPrefix, toolPrefix)
		return p
	}
	return &Profile{Host: "neutral", render: func(m Macro) string {
		switch m.ID {
		case "skill_activation":
			return activation(m)
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
	}, docs: map[string]string{}}
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
