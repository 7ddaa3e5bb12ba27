package opencode

import "github.com/nexus-harness/nexus/harness/gate"

// capabilityMap is OpenCode 1.18.33's built-in tools (the ids its bundle
// defines, and the MCP resource tools) in the gate's terms
// (harness/host/claude's capabilities.yaml explains the keys). nexus's MCP
// tools are mapped by the gate itself (nexus.yaml), which reads their
// OpenCode names through MCPName.
//
// OpenCode has no notebook tool: write, edit and apply_patch are what
// edits a notebook, so they carry structured_document_edit too (and nexus
// validate finds every class of no_file_edit enforceable in OpenCode).
// apply_patch carries every workspace-edit class and no file parameter:
// a role without file edits is refused any patch.
// The profile's analyzer (applypatch.ToolAnalyzer) names a patch's files:
// each is judged, logged and counted in files_touched.
var capabilityMap = &gate.Map{
	Host: Name,
	Tools: map[string]*gate.ToolEntry{
		ToolWrite:                     {Classes: []string{"file_creation", "file_modification", "structured_document_edit"}, FileParams: []string{"filePath"}},
		ToolEdit:                      {Classes: []string{"partial_file_edit", "file_modification", "structured_document_edit"}, FileParams: []string{"filePath"}},
		ToolApplyPatch:                {Classes: []string{"file_creation", "file_modification", "file_deletion", "partial_file_edit", "structured_document_edit"}},
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

// EditTools are the tools OpenCode's permission "edit" governs: denying
// it hides all three from an agent (docs/opencode-notes.md).
var EditTools = []string{ToolWrite, ToolEdit, ToolApplyPatch}
