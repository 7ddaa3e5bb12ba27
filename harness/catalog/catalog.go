// Package catalog derives nexus-core's agent catalog and skills for a host:
// per role of the distribution's manifest its description, model tier,
// capabilities, the host's tools the gate denies it on every call, and its
// body.md with the macros spelled for the host; per skill its description
// and trigger tag and its body, spelled the same way. It derives content
// only: each host package (harness/host/<host>) turns a Catalog into its
// own files (agent files, skill folders, their frontmatter and notes) and
// writes them.
package catalog

import (
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/tags"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Options say what to derive, for which host. The settings among them are
// built once from the configuration by the composition root
// (harness/compose); the host's part comes from its package.
type Options struct {
	Core *vocabulary.Core
	// ToolPrefix is the prefix nexus's MCP tools are served with
	// (mcp.tool_prefix).
	ToolPrefix string
	// Gate holds the gate's settings (the extra capabilities and denials
	// decide what an agent is denied).
	Gate gate.Options
	// ToolClasses are the classes the tool registry declares per abstract
	// nexus tool (the gate's input; see gate.Options).
	ToolClasses map[string][]string
	// HostMap is the capability map of the host's tools; ToolRefPrefix is
	// how the host names nexus's MCP tools (mcp__nexus__).
	HostMap       *gate.Map
	ToolRefPrefix string
	// MCPName is how the host's tool names hold an MCP tool's name (nil:
	// mcp__<server>__<name>), for configured denials named the host's way.
	MCPName func(hostTool string) string
	// Skills is how skill bodies' primitives read in the host (nil: the
	// neutral spelling).
	Skills *tags.Spelling
	// AgentPrefix is put before role ids where skills name an agent to
	// spawn ("" for agent files installed on their own; "<plugin>:" for a
	// host that names a plugin's agents that way).
	AgentPrefix string
}

// WithHost sets the host's part of the options from the profile its
// package supplies (harness/host/<host>): its map, how it names nexus's
// tools and agents, its spelling.
func (o Options) WithHost(p lifecycle.HostProfile) Options {
	o.HostMap, o.ToolRefPrefix, o.Skills, o.AgentPrefix, o.MCPName = p.Map, p.ToolPrefix, p.Skills, p.AgentPrefix, p.MCPName
	return o
}

// Catalog is the distribution's roles and skills as one host sees them.
type Catalog struct {
	// Version is the nexus-core version derived from.
	Version string
	Agents  []Agent
	Skills  []Skill
	// Triggers are every tag trigger of the distribution ([plan], [d], ...).
	Triggers []string
	// ToolRef names a nexus tool as the host shows it
	// (mcp__nexus__nx_artifact_write).
	ToolRef func(abstract string) string
	// ToolPrefix is the served tool prefix (nx_).
	ToolPrefix string
}

// Agent is one role.
type Agent struct {
	ID string
	// Description is the role's description followed by "Use for: " and
	// its task.
	Description string
	// Tier is its model_tier (high, standard).
	Tier string
	// Capabilities are its effective capabilities (canonical and
	// configured), sorted.
	Capabilities []string
	// Denied are the host's tools (and nexus's, by the host's names) the
	// gate denies it on every call: what an agent file may hide.
	Denied []string
	// Body is body.md with its macros spelled for the host.
	Body string
}

// Skill is one skill.
type Skill struct {
	ID string
	// Description is the skill's description, followed by the tag that
	// activates it when it has one.
	Description string
	// Trigger is the tag that activates it ("" when none does).
	Trigger string
	// Body is body.md spelled for the host, with its host notes.
	Body string
}

// Build derives the catalog for a host.
func Build(o Options) (*Catalog, error) {
	gopt := o.Gate
	gopt.Core, gopt.HostMap, gopt.ToolPrefix, gopt.ToolClasses, gopt.ToolRefPrefix, gopt.MCPName = o.Core, o.HostMap, o.ToolPrefix, o.ToolClasses, o.ToolRefPrefix, o.MCPName
	g, _, err := gate.New(gopt)
	if err != nil {
		return nil, err
	}
	profile := tags.NewProfile(o.Skills, tags.New(o.Core.Tags()), o.ToolPrefix)
	profile.AgentPrefix = o.AgentPrefix
	known := map[string]bool{}
	for _, inv := range o.Core.Manifest().Vocabulary.Invocations {
		known[inv.ID] = true
	}
	c := &Catalog{Version: o.Core.Version(), ToolRef: g.ToolRef, ToolPrefix: o.ToolPrefix}
	for _, t := range o.Core.Tags() {
		c.Triggers = append(c.Triggers, t.Trigger)
	}
	for _, a := range o.Core.Manifest().Agents {
		body, err := o.Core.ReadAgentBody(a.ID)
		if err != nil {
			return nil, err
		}
		expanded, err := tags.Expand(body, known, profile.Render)
		if err != nil {
			return nil, fmt.Errorf("agents/%s/body.md: %w", a.ID, err)
		}
		desc := strings.TrimRight(a.Description, " .") + "."
		if a.Task != "" {
			desc += " Use for: " + strings.TrimRight(a.Task, " .") + "."
		}
		c.Agents = append(c.Agents, Agent{
			ID:           a.ID,
			Description:  desc,
			Tier:         a.ModelTier,
			Capabilities: g.Capabilities(a.ID),
			Denied:       g.HostDenied(a.ID),
			Body:         expanded,
		})
	}
	for _, s := range o.Core.Manifest().Skills {
		body, expandErr, err := tags.RenderSkill(o.Core, s.ID, profile)
		if err != nil {
			return nil, err
		}
		if expandErr != nil {
			return nil, fmt.Errorf("render skill %s: %w", s.ID, expandErr)
		}
		sk := Skill{ID: s.ID, Description: s.Description, Trigger: triggerOf(o.Core, s.ID), Body: body}
		if sk.Trigger != "" {
			sk.Description = strings.TrimRight(sk.Description, " .") + ". nexus activates it when the user types " + sk.Trigger + "."
		}
		c.Skills = append(c.Skills, sk)
	}
	return c, nil
}

func triggerOf(core *vocabulary.Core, skill string) string {
	for _, t := range core.Tags() {
		if t.Type == vocabulary.TagSkill && t.Skill == skill {
			return t.Trigger
		}
	}
	return ""
}
