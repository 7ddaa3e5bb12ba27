package harness

import (
	"slices"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// The bundled decision store (plugins/decisions) as nexus declares it. nexus
// does not link the plugin (the engine reaches it only through the SDK, as a
// plugin process), so its name, settings keys and tools are written here; a
// test holds them to the plugin's own.
const (
	// DecisionsName is the bundled store's plugin name; it is also the
	// only tool set `nexus mcp --only/--without` can name.
	DecisionsName           = "decisions"
	decisionsVersion        = "0.1.0"
	decisionsSetFrontmatter = "frontmatter"
	decisionsSetHome        = "nauro_home"
	decisionsSetStore       = "store"
)

// decisionTools are the store's tools, under the reference's own names.
var decisionTools = []string{
	"check_decision", "propose_decision", "get_decision", "list_decisions", "search_decisions",
	"get_context", "get_raw_file", "diff_since_last_session", "flag_question", "update_state", "list_projects",
}

// DecisionTools returns the bundled store's tool names (check_decision,
// ...), served under those names by `nexus mcp`.
func DecisionTools() []string { return slices.Clone(decisionTools) }

// IsDecisionTool says whether name is one of the bundled store's tools.
func IsDecisionTool(name string) bool { return slices.Contains(decisionTools, name) }

// BuiltinServeArgs run a built-in plugin in the plugin host program
// (`nexus-plugins serve NAME`).
func BuiltinServeArgs(name string) []string { return []string{"serve", name} }

// DecisionsManifest declares the bundled decision store: the plugin host
// program (nexus-plugins, installed next to nexus) run as
// `nexus-plugins serve decisions`, its tools exposed under the reference's
// own names. nexus ships that program itself, so there is no digest to
// check. The store lives in NAURO_HOME, outside the workspace, so no
// capability blocks its tools.
func DecisionsManifest(project, hostProgram string) *pluginhost.Manifest {
	tools := make([]pluginhost.ToolDecl, len(decisionTools))
	for i, n := range decisionTools {
		tools[i] = pluginhost.ToolDecl{Name: n, CapabilityClasses: []string{}}
	}
	return &pluginhost.Manifest{
		Name:            DecisionsName,
		Version:         decisionsVersion,
		Description:     "Nauro-compatible decision store, bundled with nexus",
		ProtocolVersion: sdk.ProtocolVersion,
		Executable:      hostProgram,
		Args:            BuiltinServeArgs(DecisionsName),
		Dir:             project,
		ProjectDir:      true,
		// The store's persistent index lives in the user's cache folder
		// (or NEXUS_DECISIONS_INDEX_DIR).
		Env:           []string{"NAURO_HOME", "XDG_CACHE_HOME", "NEXUS_DECISIONS_INDEX_DIR"},
		Tools:         tools,
		BareToolNames: true,
		Source:        pluginhost.SourceBuiltin,
	}
}
