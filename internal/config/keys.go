package config

// Kind is the type of a configuration value.
type Kind int

// Kinds of configuration values.
const (
	String Kind = iota
	Bool
	Int
	Float
	StringList
	// Map is a mapping whose sub-keys are free (their meaning belongs to the
	// consumer, e.g. per-agent capability additions).
	Map
)

func (k Kind) String() string {
	return [...]string{"string", "bool", "int", "float", "list of strings", "mapping"}[k]
}

// Key is one configuration key nexus understands.
type Key struct {
	Name    string
	Kind    Kind
	Default any
	Help    string
}

// Keys lists every configuration key. A key in a config file that is not
// listed here (or below a Map key) is an error: typos must not be ignored.
var Keys = []Key{
	{"core.dir", String, "", "nexus-core distribution directory (else NEXUS_CORE_DIR, else node_modules/@moreih29/nexus-core above the project)"},
	{"harness.id", String, "nexus", "harness id: the .nexus/state/<id>/ namespace this harness owns"},
	{"runtime.root", String, "", "the .nexus directory to use instead of <project>/.nexus (env NEXUS_RUNTIME_ROOT)"},
	{"log.level", String, "info", "log level for .nexus/state/<id>/nexus.log: debug, info, warn, error"},

	{"mcp.tool_prefix", String, "nx_", "prefix of the nexus-core MCP tool names"},
	{"mcp.http_addr", String, "127.0.0.1:7777", "address `nexus mcp --http` listens on by default"},
	{"mcp.token_file", String, "", "bearer token file for `nexus mcp --http` (default: <user config dir>/nexus/mcp-token)"},

	{"gate.policy", String, "fail-open", "what the tool gate does when nexus fails while handling a call: fail-open or fail-closed (a call nexus cannot read, or cannot check for want of a distribution, is always denied)"},
	{"gate.unplanned_edit", String, "deny", "file edits while no tasks.json exists: deny, warn or off"},
	{"gate.extra_capabilities", Map, map[string]any{}, "per-agent capability additions (agent id → list of capability ids); canonical ones cannot be removed"},
	{"gate.extra_denials", Map, map[string]any{}, "per-agent extra denied tool names (agent id → list of tool names)"},

	{"memory.merge.threshold", Float, 0.35, "merge-before-create similarity threshold (0..1) above which a save extends an existing file"},
	{"memory.gc.auto", Bool, false, "enable automatic memory deletion (needs all three thresholds)"},
	{"memory.gc.min_days_since_access", Int, 0, "signal 1: at least this many days since the last read"},
	{"memory.gc.min_cycles_since_access", Int, 0, "signal 2: at least this many completed cycles since the last read"},
	{"memory.gc.max_access_count", Int, -1, "signal 3: read at most this many times in all"},

	{"decisions.frontmatter", String, "documented", "decision frontmatter style: documented (omit empty keys) or reference (all ten keys, as Nauro writes them)"},
	{"decisions.nauro_home", String, "", "Nauro home (default $NAURO_HOME, else ~/.nauro)"},
	{"decisions.store", String, "", "project decision store folder (default: found through .nauro/config.json)"},
	{"decisions.enabled", Bool, true, "expose the decision-store plugin's tools over MCP"},

	{"opencode.models", Map, map[string]any{}, "OpenCode model per nexus-core model_tier for the agent files `nexus install opencode` writes, as provider/model (default: none, so each role runs on its caller's model; a value may be inherit)"},
	{"claude.models", Map, map[string]any{}, "Claude Code model per nexus-core model_tier for the agent files `nexus install claude` writes (default high: opus, standard: sonnet; a value may be inherit)"},
	{"codex.models", Map, map[string]any{}, "Codex model per nexus-core model_tier for the agent files `nexus install codex` writes (default: none, so each role runs on the session's model; a value may be inherit, or MODEL:EFFORT to set model_reasoning_effort too)"},

	{"plugins.paths", StringList, []string{}, "extra plugin manifest paths (nexus-plugin.yaml files or folders holding one)"},
	{"plugins.settings", Map, map[string]any{}, "per-plugin settings (plugin name → mapping of strings)"},
	{"plugins.disabled", StringList, []string{}, "names of discovered plugins not to load"},
	{"plugins.hook_server", Bool, true, "hooks hand events to a per-project background nexus that keeps subscribed plugins running (else each hook starts them)"},
}

// keyIndex maps a key name to its definition.
var keyIndex = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Name] = &Keys[i]
	}
	return m
}()

// Lookup returns the definition of a key.
func Lookup(name string) (*Key, bool) {
	k, ok := keyIndex[name]
	return k, ok
}
