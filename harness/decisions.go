package harness

import (
	"encoding/json"
	"fmt"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// BuiltinServeArgs run a built-in plugin in the plugin host program
// (`nexus-plugins serve NAME`).
func BuiltinServeArgs(name string) []string { return []string{"serve", name} }

// DecisionsManifest declares the bundled decision store: the plugin host
// program (nexus-plugins, installed next to nexus) run as
// `nexus-plugins serve decisions`, its tools exposed under the reference's
// own names. nexus ships that program itself, so there is no digest to
// check. The store lives in NAURO_HOME, outside the workspace, so no
// capability blocks its tools. Its name, tools and environment come from
// decisionsapi, which the store describes itself with: the engine does not
// link the store (plugins/decisions), it reaches it as a plugin process.
func DecisionsManifest(project, hostProgram string) *pluginhost.Manifest {
	names := decisionsapi.Tools()
	tools := make([]pluginhost.ToolDecl, len(names))
	for i, n := range names {
		tools[i] = pluginhost.ToolDecl{Name: n, CapabilityClasses: []string{}}
	}
	return &pluginhost.Manifest{
		Name:            decisionsapi.Name,
		Version:         decisionsapi.Version,
		Description:     "Nauro-compatible decision store, bundled with nexus",
		ProtocolVersion: sdk.ProtocolVersion,
		Executable:      hostProgram,
		Args:            BuiltinServeArgs(decisionsapi.Name),
		Dir:             project,
		ProjectDir:      true,
		Env:             decisionsapi.Env(),
		Tools:           tools,
		BareToolNames:   true,
		Source:          pluginhost.SourceBuiltin,
	}
}

// DecisionsSpecs are the bundled store's own descriptions of its tools
// (decisionsapi.ToolSpecs, which its tests keep equal to what it describes
// when it starts), for DecisionsManifest's Specs: with them an MCP server
// lists the store's tools at once and starts the store on the first call.
func DecisionsSpecs() ([]sdk.ToolSpec, error) {
	var specs []sdk.ToolSpec
	if err := json.Unmarshal(decisionsapi.ToolSpecs(), &specs); err != nil {
		return nil, fmt.Errorf("the decision store's tool specs: %w", err)
	}
	return specs, nil
}
