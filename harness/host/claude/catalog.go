package claude

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/install"
)

// The agents and skills nexus installs for Claude Code: one agent file per
// role (agents/<id>.md) and one skill folder per skill
// (skills/<id>/SKILL.md), plus nexus's own setup skill (nx-setup,
// nexus-core's Setup Skill Contract), rendered from the host-neutral
// catalog (harness/catalog).
//
// An agent file carries the role's id as its name (so the tracker records a
// schema-valid agent_name), the model for its model_tier, the tools the
// capability gate would deny on every call as disallowedTools (computed by
// the gate itself: one source of truth), and body.md with its macros
// expanded followed by the harness notes nexus-core asks a consumer to add
// (how to report to Lead, the concrete tool names).

// DefaultModels maps nexus-core's model_tier to Claude Code model aliases.
var DefaultModels = map[string]string{"high": "opus", "standard": "sonnet"}

// SetupSkill is the id of nexus's own setup skill.
const SetupSkill = "nx-setup"

// Models returns the model_tier → model map: DefaultModels overridden by
// the configured mapping (claude.models).
func Models(configured map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range DefaultModels {
		out[k] = v
	}
	for k, v := range configured {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("config claude.models.%s: expected a model name (opus, sonnet, haiku, inherit or a full model id), not %v", k, v)
		}
		out[k] = strings.TrimSpace(s)
	}
	return out, nil
}

// CatalogOptions say how to render a catalog as Claude Code files.
type CatalogOptions struct {
	// Models maps a model_tier to the model an agent file names (nil =
	// DefaultModels).
	Models map[string]string
	// AgentPrefix names nexus's agents where the setup skill names one:
	// "" for files under .claude, "nexus:" inside the plugin package.
	AgentPrefix string
	// Nexus is the command line of this nexus, as the setup skill should
	// run it (an absolute path, quoted for a shell when needed).
	Nexus string
}

// CatalogFiles renders every agent and skill of a catalog, and nx-setup, as
// files of a Claude Code folder (paths relative to .claude, ~/.claude or
// the plugin root), sorted by path.
func CatalogFiles(c *catalog.Catalog, o CatalogOptions) ([]install.OwnedFile, error) {
	models := o.Models
	if models == nil {
		models = DefaultModels
	}
	var files []install.OwnedFile
	for _, a := range c.Agents {
		f, err := agentFile(c, a, models)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	for _, s := range c.Skills {
		if s.ID == SetupSkill {
			continue // nexus renders its own below
		}
		fm, err := frontmatter([][2]string{{"name", s.ID}, {"description", s.Description}})
		if err != nil {
			return nil, err
		}
		files = append(files, install.OwnedFile{Path: "skills/" + s.ID + "/SKILL.md", Content: join(fm, s.Body)})
	}
	setup, err := setupSkill(c, o)
	if err != nil {
		return nil, err
	}
	files = append(files, setup)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

func agentFile(c *catalog.Catalog, a catalog.Agent, models map[string]string) (install.OwnedFile, error) {
	model, ok := models[a.Tier]
	if !ok {
		return install.OwnedFile{}, fmt.Errorf("agent %s has model_tier %q, which config claude.models does not map: add claude.models.%s (for example inherit)", a.ID, a.Tier, a.Tier)
	}
	fields := [][2]string{{"name", a.ID}, {"description", a.Description}, {"model", model}}
	if len(a.Denied) > 0 {
		fields = append(fields, [2]string{"disallowedTools", strings.Join(a.Denied, ", ")})
	}
	fm, err := frontmatter(fields)
	if err != nil {
		return install.OwnedFile{}, err
	}
	return install.OwnedFile{Path: "agents/" + a.ID + ".md", Content: join(fm, strings.TrimRight(a.Body, "\n")+"\n\n"+agentNotes(c, a))}, nil
}

// agentNotes are the harness notes nexus-core's consumer guide (§7) asks
// for beside the neutral body.
func agentNotes(c *catalog.Catalog, a catalog.Agent) string {
	var b strings.Builder
	b.WriteString("## Working in Claude Code (nexus harness notes)\n\n")
	b.WriteString("- **Reporting to Lead**: you run as a Claude Code subagent spawned by Lead with the Agent tool. Your final message is your report: Claude Code hands it to Lead as the Agent tool's result when you stop, and there is no other channel to Lead, so put everything Lead needs in it (in the report format above). Subagents do not talk to each other.\n")
	fmt.Fprintf(&b, "- **nexus tools**: tools named %s* in these instructions are nexus's MCP tools, listed in Claude Code as %s. The artifact tool is %s (filename, content): it saves deliverables under .nexus/state/artifacts/. The task list is %s (read-only for you unless Lead says otherwise); %s and %s belong to Lead.\n",
		c.ToolPrefix, c.ToolRef("*"), c.ToolRef("artifact_write"), c.ToolRef("task_list"), c.ToolRef("task_add"), c.ToolRef("task_update"))
	if len(a.Capabilities) > 0 {
		fmt.Fprintf(&b, "- **Capabilities** (%s): ", strings.Join(a.Capabilities, ", "))
		if len(a.Denied) > 0 {
			fmt.Fprintf(&b, "Claude Code does not offer you %s. ", strings.Join(a.Denied, ", "))
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
func setupSkill(c *catalog.Catalog, o CatalogOptions) (install.OwnedFile, error) {
	nexus := o.Nexus
	if nexus == "" {
		nexus = "nexus"
	}
	init := "nx-init"
	if o.AgentPrefix != "" {
		init = o.AgentPrefix + init
	}
	body := strings.NewReplacer("{{nexus}}", nexus, "{{init}}", init, "{{tags}}", strings.Join(c.Triggers, " ")).Replace(setupBody)
	fm, err := frontmatter([][2]string{{"name", SetupSkill}, {"description", "Set up nexus for Claude Code: choose the project or user scope, install the hooks, MCP server, agents and skills, the status line, check it with nexus doctor, review plugins, then onboard the codebase with nx-init. Use when the user asks to set up, install, repair or configure nexus."}})
	if err != nil {
		return install.OwnedFile{}, err
	}
	return install.OwnedFile{Path: "skills/" + SetupSkill + "/SKILL.md", Content: join(fm, body)}, nil
}
