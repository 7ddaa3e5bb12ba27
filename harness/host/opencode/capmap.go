package opencode

import (
	"sort"

	"github.com/nexus-harness/nexus/harness/gate"
)

// capabilityMap is OpenCode 1.18.33's built-in tools (the ids its bundle
// defines, and the MCP resource tools) in the gate's terms
// (harness/host/claude's capabilities.yaml explains the keys). nexus's MCP
// tools are mapped by the gate itself (nexus.yaml), which reads their
// OpenCode names through MCPName.
//
// apply_patch carries every workspace-edit class and no file parameter:
// a role without file edits is refused any patch, and while no task cycle
// is open the unplanned-edit rule refuses it (its files unknown).
// TODO(issue 24 integration): name the patch's files (the tool log,
// files_touched, the unplanned-edit exemption of .nexus/) with the
// apply_patch parser of harness/host/codex (ParsePatch), moved where both
// hosts' gate can use it; the tool's patchText is Codex's format.
var capabilityMap = &gate.Map{
	Host: Name,
	Tools: map[string]*gate.ToolEntry{
		ToolWrite:                     {Classes: []string{"file_creation", "file_modification"}, FileParams: []string{"filePath"}},
		ToolEdit:                      {Classes: []string{"partial_file_edit", "file_modification"}, FileParams: []string{"filePath"}},
		ToolApplyPatch:                {Classes: []string{"file_creation", "file_modification", "file_deletion", "partial_file_edit"}},
		ToolBash:                      {Classes: []string{"shell_command_exec", "subprocess_spawn"}, Shell: &gate.Shell{Param: "command", Dialect: gate.DialectPOSIX}},
		ToolRead:                      {Classes: []string{gate.ClassFileRead}, FileParams: []string{"filePath"}},
		"glob":                        {Classes: []string{"file_search"}},
		"grep":                        {Classes: []string{"file_search"}},
		"lsp":                         {Classes: []string{"code_intelligence"}},
		"webfetch":                    {Classes: []string{"network_read"}},
		"websearch":                   {Classes: []string{"network_read"}},
		"todowrite":                   {Classes: []string{"progress_tracking"}},
		ToolTask:                      {Classes: []string{"subagent_spawn"}},
		ToolSkill:                     {Classes: []string{"skill_activation"}},
		"question":                    {Classes: []string{"user_question"}},
		"plan_exit":                   {Classes: []string{"host_mode"}},
		"list_mcp_resources":          {Classes: []string{"mcp_resource_read"}},
		"list_mcp_resource_templates": {Classes: []string{"mcp_resource_read"}},
		"read_mcp_resource":           {Classes: []string{"mcp_resource_read"}},
	},
}

// CapabilityMap is the capability map of OpenCode's tools, for the gate.
// It is shared, so callers must not modify it.
func CapabilityMap() *gate.Map { return capabilityMap }

// editTools are the tools OpenCode's permission "edit" governs: denying
// it hides all three from an agent (docs/opencode-notes.md).
var editTools = []string{ToolWrite, ToolEdit, ToolApplyPatch}

// PermissionDenials returns the OpenCode permission keys an agent's file
// should deny, given the semantic classes its capabilities block and the
// classes of nexus's MCP tools by the name nexus serves them under
// (nx_task_add): "edit" when any of write, edit and apply_patch carries a
// blocked class, "bash" when bash itself does (its file writes are the
// gate's: denying bash would take it away whole), the task tool, and
// each nexus MCP tool as OpenCode names it (nexus_nx_task_add). OpenCode
// then does not offer those tools at all; the gate still checks every
// call. Sorted.
func PermissionDenials(blocked []string, mcpTools map[string][]string) []string {
	isBlocked := map[string]bool{}
	for _, c := range blocked {
		isBlocked[c] = true
	}
	hits := func(classes []string) bool {
		for _, c := range classes {
			if isBlocked[c] {
				return true
			}
		}
		return false
	}
	var out []string
	for _, t := range editTools {
		if hits(capabilityMap.Tools[t].Classes) {
			out = append(out, "edit")
			break
		}
	}
	for _, t := range []string{ToolBash, ToolTask} {
		if hits(capabilityMap.Tools[t].Classes) {
			out = append(out, t)
		}
	}
	for name, classes := range mcpTools {
		if hits(classes) {
			out = append(out, MCPToolPrefix+name)
		}
	}
	sort.Strings(out)
	return out
}
