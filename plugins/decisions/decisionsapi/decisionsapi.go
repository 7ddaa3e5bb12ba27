// Package decisionsapi is what nexus and the bundled decision store
// (plugins/decisions) both need to know about the store: its plugin name and
// version, its settings keys, its tool names, the MCP server name it is
// registered under and the environment it reads. Each fact is written here
// once; the store uses it to describe itself, nexus to declare the store as
// a built-in plugin, reserve its tool names, register its server and check
// it (doctor). It imports nothing of nexus, so every nexus process can know
// the store without linking it.
package decisionsapi

import (
	_ "embed"
	"slices"
)

// Name is the store's plugin name (and the only tool set
// `nexus mcp --only/--without` can name); Version its version.
const (
	Name    = "decisions"
	Version = "0.1.0"
)

// ServerName is the MCP server name the store is served under on its own
// (`nexus mcp --only decisions`), Nauro's own server's name, so agents see
// the tools as with Nauro: mcp__nauro__check_decision.
const ServerName = "nauro"

// The store's settings keys: plugins.settings.decisions.<key> in nexus
// configuration, or decisions.<key>.
const (
	SettingHome        = "nauro_home"  // overrides $NAURO_HOME
	SettingStore       = "store"       // an explicit project store folder
	SettingFrontmatter = "frontmatter" // documented (default) | reference
)

// Tool names: the reference's, so agents prompted for Nauro work unchanged.
const (
	ToolCheckDecision   = "check_decision"
	ToolProposeDecision = "propose_decision"
	ToolGetDecision     = "get_decision"
	ToolListDecisions   = "list_decisions"
	ToolSearchDecisions = "search_decisions"
	ToolGetContext      = "get_context"
	ToolGetRawFile      = "get_raw_file"
	ToolDiffSince       = "diff_since_last_session"
	ToolFlagQuestion    = "flag_question"
	ToolUpdateState     = "update_state"
	ToolListProjects    = "list_projects"
)

var tools = []string{
	ToolCheckDecision, ToolProposeDecision, ToolGetDecision, ToolListDecisions, ToolSearchDecisions,
	ToolGetContext, ToolGetRawFile, ToolDiffSince, ToolFlagQuestion, ToolUpdateState, ToolListProjects,
}

// Tools returns the store's tool names.
func Tools() []string { return slices.Clone(tools) }

// IsTool says whether name is one of the store's tools.
func IsTool(name string) bool { return slices.Contains(tools, name) }

// toolSpecs is the store's description of its tools as it gives it to
// nexus when it starts (a JSON array of the plugin SDK's ToolSpec: name,
// description, input_schema, annotations), kept here by the store's test
// TestToolSpecsPublished (go test ./plugins/decisions -run
// TestToolSpecsPublished -update writes it).
//
//go:embed tools.json
var toolSpecs []byte

// ToolSpecs returns the store's tools as it describes them, so that nexus
// can list them over MCP before the store has started (the "nauro"
// server's tools/list is answered at once; the store starts on the first
// call).
func ToolSpecs() []byte { return slices.Clone(toolSpecs) }

// The environment the store reads.
const (
	EnvHome     = "NAURO_HOME"                // the Nauro home (registry and stores), default ~/.nauro
	EnvIndexDir = "NEXUS_DECISIONS_INDEX_DIR" // where its persistent search index lives; "off" disables it
)

// Env lists the environment variables the store reads, for the plugin's
// environment allow-list: EnvHome, EnvIndexDir and XDG_CACHE_HOME (the
// index's default folder).
func Env() []string { return []string{EnvHome, "XDG_CACHE_HOME", EnvIndexDir} }
