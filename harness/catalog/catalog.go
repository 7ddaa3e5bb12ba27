// Package catalog renders nexus-core's agent catalog and skills for Claude
// Code: one agent file per role of the distribution's manifest
// (agents/<id>.md) and one skill folder per skill (skills/<id>/SKILL.md),
// plus nexus's own setup skill (nx-setup, nexus-core's Setup Skill
// Contract). It only renders; harness/host/claude writes the files and
// records them.
//
// An agent file carries the role's id as its name (so the tracker records a
// schema-valid agent_name), the model for its model_tier, the tools the
// capability gate would deny on every call as disallowedTools (computed by
// the gate itself: one source of truth), and body.md with its macros
// expanded followed by the harness notes nexus-core asks a consumer to add
// (how to report to Lead, the concrete tool names).
package catalog

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/tags"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/vocabulary"
)

// DefaultModels maps nexus-core's model_tier to Claude Code model aliases.
var DefaultModels = map[string]string{"high": "opus", "standard": "sonnet"}

// SetupSkill is the id of nexus's own setup skill.
const SetupSkill = "nx-setup"

// Options say what to render.
type Options struct {
	Core   *vocabulary.Core
	Config *config.Config // nil = defaults (tool prefix, claude.models, gate additions)
	// ToolClasses are the classes the tool registry declares per abstract
	// nexus tool (the gate's input; see gate.Options).
	ToolClasses map[string][]string
	// AgentPrefix is put before role ids where skills name an agent to
	// spawn: "" for agent files under .claude/agents, "nexus:" inside the
	// Claude Code plugin (Claude Code names plugin agents <plugin>:<id>).
	AgentPrefix string
	// Nexus is the command line of this nexus, as the setup skill should
	// run it (an absolute path, quoted for a shell when needed).
	Nexus string
}

// File is one rendered file; Path is slash-separated, relative to the
// Claude Code folder (.claude, ~/.claude, or the plugin root).
type File struct {
	Path    string
	Content []byte
}

// Claude renders every agent and skill of the distribution, and nx-setup.
func Claude(o Options) ([]File, error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Defaults()
	}
	models, err := Models(cfg)
	if err != nil {
		return nil, err
	}
	g, _, err := gate.New(gate.Options{Core: o.Core, Host: gate.HostClaude, Config: cfg, ToolClasses: o.ToolClasses})
	if err != nil {
		return nil, err
	}
	prefix := cfg.String("mcp.tool_prefix")
	profile := tags.ProfileFor(gate.HostClaude, tags.New(o.Core.Tags()), prefix)
	profile.AgentPrefix = o.AgentPrefix
	known := map[string]bool{}
	for _, inv := range o.Core.Manifest().Vocabulary.Invocations {
		known[inv.ID] = true
	}
	var files []File
	for _, a := range o.Core.Manifest().Agents {
		f, err := agentFile(o.Core, &a, g, models, profile, known, prefix)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	for _, s := range o.Core.Manifest().Skills {
		if s.ID == SetupSkill {
			continue // nexus renders its own below
		}
		body, expandErr, err := tags.RenderSkill(o.Core, s.ID, profile)
		if err != nil {
			return nil, err
		}
		if expandErr != nil {
			return nil, fmt.Errorf("render skill %s: %w", s.ID, expandErr)
		}
		desc := s.Description
		if tg := triggerOf(o.Core, s.ID); tg != "" {
			desc = strings.TrimRight(desc, " .") + ". nexus activates it when the user types " + tg + "."
		}
		fm, err := frontmatter([][2]string{{"name", s.ID}, {"description", desc}})
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: "skills/" + s.ID + "/SKILL.md", Content: join(fm, body)})
	}
	setup, err := setupSkill(o)
	if err != nil {
		return nil, err
	}
	files = append(files, setup)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// Models returns the model_tier → model map: DefaultModels overridden by
// config claude.models.
func Models(cfg *config.Config) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range DefaultModels {
		out[k] = v
	}
	for k, v := range cfg.Map("claude.models") {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("config claude.models.%s: expected a model name (opus, sonnet, haiku, inherit or a full model id), not %v", k, v)
		}
		out[k] = strings.TrimSpace(s)
	}
	return out, nil
}

func triggerOf(core *vocabulary.Core, skill string) string {
	for _, t := range core.Tags() {
		if t.Type == vocabulary.TagSkill && t.Skill == skill {
			return t.Trigger
		}
	}
	return ""
}

func agentFile(core *vocabulary.Core, a *vocabulary.Agent, g *gate.Gate, models map[string]string, p *tags.Profile, known map[string]bool, prefix string) (File, error) {
	body, err := core.ReadAgentBody(a.ID)
	if err != nil {
		return File{}, err
	}
	expanded, err := tags.Expand(body, known, p.Render)
	if err != nil {
		return File{}, fmt.Errorf("agents/%s/body.md: %w", a.ID, err)
	}
	model, ok := models[a.ModelTier]
	if !ok {
		return File{}, fmt.Errorf("agent %s has model_tier %q, which config claude.models does not map: add claude.models.%s (for example inherit)", a.ID, a.ModelTier, a.ModelTier)
	}
	desc := strings.TrimRight(a.Description, " .") + "."
	if a.Task != "" {
		desc += " Use for: " + strings.TrimRight(a.Task, " .") + "."
	}
	denied := g.HostDenied(a.ID)
	fields := [][2]string{{"name", a.ID}, {"description", desc}, {"model", model}}
	if len(denied) > 0 {
		fields = append(fields, [2]string{"disallowedTools", strings.Join(denied, ", ")})
	}
	fm, err := frontmatter(fields)
	if err != nil {
		return File{}, err
	}
	caps := g.Capabilities(a.ID)
	return File{Path: "agents/" + a.ID + ".md", Content: join(fm, strings.TrimRight(expanded, "\n")+"\n\n"+agentNotes(a, caps, denied, g, prefix))}, nil
}

// agentNotes are the harness notes nexus-core's consumer guide (§7) asks
// for beside the neutral body.
func agentNotes(a *vocabulary.Agent, caps, denied []string, g *gate.Gate, prefix string) string {
	var b strings.Builder
	b.WriteString("## Working in Claude Code (nexus harness notes)\n\n")
	b.WriteString("- **Reporting to Lead**: you run as a Claude Code subagent spawned by Lead with the Agent tool. Your final message is your report: Claude Code hands it to Lead as the Agent tool's result when you stop, and there is no other channel to Lead, so put everything Lead needs in it (in the report format above). Subagents do not talk to each other.\n")
	fmt.Fprintf(&b, "- **nexus tools**: tools named %s* in these instructions are nexus's MCP tools, listed in Claude Code as %s. The artifact tool is %s (filename, content): it saves deliverables under .nexus/state/artifacts/. The task list is %s (read-only for you unless Lead says otherwise); %s and %s belong to Lead.\n",
		prefix, g.ToolRef("*"), g.ToolRef("artifact_write"), g.ToolRef("task_list"), g.ToolRef("task_add"), g.ToolRef("task_update"))
	if len(caps) > 0 {
		fmt.Fprintf(&b, "- **Capabilities** (%s): ", strings.Join(caps, ", "))
		if len(denied) > 0 {
			fmt.Fprintf(&b, "Claude Code does not offer you %s. ", strings.Join(denied, ", "))
		}
		b.WriteString("nexus's gate also checks every other call (a shell command that writes files counts as a file edit) and denies what your capabilities block; the denial says what to do instead, usually: report to Lead.\n")
	}
	b.WriteString("- **Project knowledge**: .nexus/memory/, .nexus/context/ and .nexus/rules/ hold the project's notes, context and rules; read what bears on your task.\n")
	return b.String()
}

// frontmatter renders ordered YAML key/value pairs between --- lines.
func frontmatter(fields [][2]string) ([]byte, error) {
	node := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fields {
		node.Content = append(node.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: f[0]},
			&yaml.Node{Kind: yaml.ScalarNode, Value: f[1]})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, fmt.Errorf("render frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return append(append([]byte("---\n"), buf.Bytes()...), "---\n\n"...), nil
}

func join(fm []byte, body string) []byte {
	return append(fm, strings.TrimRight(body, "\n")+"\n"...)
}

//go:embed setup.md
var setupBody string

// setupSkill renders nx-setup, nexus's setup skill (nexus-core's Setup Skill
// Contract: scope selection, status display, recommended plugins, knowledge
// initialisation through nx-init).
func setupSkill(o Options) (File, error) {
	nexus := o.Nexus
	if nexus == "" {
		nexus = "nexus"
	}
	var forms []string
	for _, t := range o.Core.Tags() {
		forms = append(forms, t.Trigger)
	}
	init := "nx-init"
	if o.AgentPrefix != "" {
		init = o.AgentPrefix + init
	}
	body := strings.NewReplacer("{{nexus}}", nexus, "{{init}}", init, "{{tags}}", strings.Join(forms, " ")).Replace(setupBody)
	fm, err := frontmatter([][2]string{{"name", SetupSkill}, {"description", "Set up nexus for Claude Code: choose the project or user scope, install the hooks, MCP server, agents and skills, the status line, check it with nexus doctor, review plugins, then onboard the codebase with nx-init. Use when the user asks to set up, install, repair or configure nexus."}})
	if err != nil {
		return File{}, err
	}
	return File{Path: "skills/" + SetupSkill + "/SKILL.md", Content: join(fm, body)}, nil
}
