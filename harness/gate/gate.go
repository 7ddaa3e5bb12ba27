// Package gate is nexus's tool gate for pre_tool_use: it decides whether an
// agent may run a tool call.
//
// The chain is the one nexus-core describes: the agent's role → its
// capabilities (the manifest's canonical list plus config
// gate.extra_capabilities, never fewer) → the semantic classes those
// capabilities block (vocabulary/capabilities.yml) → the concrete host tools
// carrying those classes (the capability maps shipped in this package). On
// top come the project's extra denials (gate.extra_denials, additive only)
// and the unplanned-edit rule (gate.unplanned_edit). Lead has no canonical
// restrictions.
package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/vocabulary"
)

// Decisions.
const (
	Allow = "allow"
	Deny  = "deny"
	// Warn lets the call run with a warning (gate.unplanned_edit: warn).
	Warn = "warn"
)

// Rules that can deny a call.
const (
	RuleCapability    = "capability"
	RuleExtraDenial   = "extra_denial"
	RuleUnplannedEdit = "unplanned_edit"
)

// LeadKey names Lead in gate.extra_capabilities and gate.extra_denials;
// AnyKey applies an extra denial to every agent and Lead.
const (
	LeadKey = "lead"
	AnyKey  = "*"
)

// Options configure a Gate. They are built once from the configuration
// by the composition root (harness/compose); the zero value of each
// setting is the built-in default.
type Options struct {
	Core *vocabulary.Core
	// HostMap is the capability map of the host's own tools (nil: none,
	// as for a host whose events name their tools' classes themselves).
	HostMap *Map
	// ToolPrefix is the prefix nexus's MCP tools are served with
	// (mcp.tool_prefix).
	ToolPrefix string
	// UnplannedEdit is what an edit while no task cycle is open gets
	// (gate.unplanned_edit): "deny" (also ""), "warn" or "off".
	UnplannedEdit string
	// ExtraCapabilities and ExtraDenials are the project's additions per
	// agent role, LeadKey or AnyKey (gate.extra_capabilities,
	// gate.extra_denials; see RoleLists).
	ExtraCapabilities, ExtraDenials map[string][]string
	// Warnings are problems found while reading the additions (RoleLists);
	// New returns them with its own.
	Warnings []string
	// ToolClasses are the classes the tool registry declares per abstract
	// nexus tool name (harness/tools Tool.Classes); they join nexus.yaml's.
	ToolClasses map[string][]string
	// PluginTool, when set, gives the capability classes of a plugin tool
	// by the name nexus serves it under (check_decision,
	// shellguard_assess_command), which the host may show with its own
	// prefix (mcp__<server>__). It is asked only for tools neither nexus
	// nor the host map knows.
	PluginTool func(name string) (classes []string, ok bool)
	// ToolRefPrefix is how the host names nexus's MCP tools before the
	// tool prefix (mcp__nexus__; "" = the bare served name); see ToolRef.
	ToolRefPrefix string
	// MCPName, when set, is the name an MCP server serves a tool under, as
	// the host's tool name holds it ("" when it is not an MCP tool); nil
	// is the mcp__<server>__<name> convention, which most MCP hosts follow.
	MCPName func(hostTool string) string
	// Analyzers work out what one call of a host tool does when its map
	// entry's classes cannot say alone (a patch tool naming the files it
	// adds, changes and deletes), by tool name; what they find is added to
	// the entry's classes and files.
	Analyzers map[string]Analyzer
}

// Analyzer reads one call of a host tool (its input) and says what it
// does. A call it cannot read must come back Unknown with a file-writing
// class, so that the gate fails closed.
type Analyzer func(input map[string]any) Effect

// Effect is what an Analyzer found.
type Effect struct {
	// Classes are the semantic classes of the call (file_creation,
	// file_modification, file_deletion, ...).
	Classes []string
	// Files are the files the call touches, relative to the call's working
	// directory or absolute.
	Files []string
	// Unknown says that some file the call writes could not be named.
	Unknown bool
	// Why explains the analysis, for denials.
	Why []string
}

// mcpName is the mcp__<server>__<name> convention: the name after the
// server, "" when tool is not such a name.
func mcpName(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if i := strings.Index(rest, "__"); i >= 0 {
			return rest[i+2:]
		}
	}
	return ""
}

// Gate decides tool calls for one host and project configuration.
type Gate struct {
	core      *vocabulary.Core
	host      *Map
	nexus     map[string][]string // abstract nexus tool → classes
	plugin    func(string) ([]string, bool)
	mcpName   func(string) string
	analyzers map[string]Analyzer
	prefix    string
	refPrefix string
	unplanned string

	extraCaps    map[string][]string
	extraDenials map[string][]string
}

// New builds a gate. Additions naming no capability of the distribution
// are skipped and reported as warnings, so a typo never removes the
// canonical restrictions.
func New(o Options) (*Gate, []string, error) {
	if o.Core == nil {
		return nil, nil, fmt.Errorf("gate: no nexus-core distribution loaded")
	}
	hm := o.HostMap
	if hm == nil {
		hm = &Map{Tools: map[string]*ToolEntry{}}
	}
	nm, err := NexusMap()
	if err != nil {
		return nil, nil, err
	}
	unplanned := o.UnplannedEdit
	if unplanned == "" {
		unplanned = "deny"
	}
	g := &Gate{
		core:         o.Core,
		host:         hm,
		nexus:        map[string][]string{},
		plugin:       o.PluginTool,
		mcpName:      o.MCPName,
		analyzers:    o.Analyzers,
		prefix:       o.ToolPrefix,
		refPrefix:    o.ToolRefPrefix,
		unplanned:    unplanned,
		extraCaps:    map[string][]string{},
		extraDenials: map[string][]string{},
	}
	if g.mcpName == nil {
		g.mcpName = mcpName
	}
	for name, e := range nm.Tools {
		g.nexus[name] = union(e.Classes)
	}
	for name, cls := range o.ToolClasses {
		g.nexus[name] = union(g.nexus[name], cls)
	}
	warnings := append([]string(nil), o.Warnings...)
	for role, caps := range o.ExtraCapabilities {
		var kept []string
		for _, c := range caps {
			if _, ok := o.Core.Capability(c); !ok {
				warnings = append(warnings, fmt.Sprintf("config gate.extra_capabilities.%s: %q is not a capability of nexus-core %s; ignored", role, c, o.Core.Version()))
				continue
			}
			kept = append(kept, c)
		}
		g.extraCaps[role] = kept
	}
	for role, names := range o.ExtraDenials {
		g.extraDenials[role] = append([]string(nil), names...)
	}
	return g, warnings, nil
}

// RoleLists reads a configured mapping of role → list of names
// (gate.extra_capabilities, gate.extra_denials; key names it in
// warnings). A malformed entry is skipped with a warning.
func RoleLists(m map[string]any, key string) (map[string][]string, []string) {
	out := map[string][]string{}
	var warnings []string
	for role, v := range m {
		list, ok := v.([]any)
		if !ok {
			if s, isStr := v.([]string); isStr {
				out[role] = append([]string(nil), s...)
				continue
			}
			warnings = append(warnings, fmt.Sprintf("config %s.%s: expected a list of names; ignored", key, role))
			continue
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok || s == "" {
				warnings = append(warnings, fmt.Sprintf("config %s.%s: %v is not a name; ignored", key, role, e))
				continue
			}
			out[role] = append(out[role], s)
		}
	}
	return out, warnings
}

// Capabilities returns an agent role's effective capabilities: canonical ∪
// configured additions, sorted. role "" is Lead.
func (g *Gate) Capabilities(role string) []string {
	var canonical []string
	key := role
	if role == "" {
		key = LeadKey
	} else if a, ok := g.core.Agent(role); ok {
		canonical = a.Capabilities
	}
	return union(canonical, g.extraCaps[key])
}

// Classification is what nexus knows about one tool call.
type Classification struct {
	Tool string
	// Nexus is the abstract nexus-core name when the tool is one of
	// nexus's own (task_add for mcp__nexus__nx_task_add), or the name a
	// plugin tool is served under (check_decision).
	Nexus   string
	Classes []string
	// Files are the files the call names (absolute, cleaned): written
	// files for edits and shell writes, the read file for reads.
	Files []string
	// Writes is true when the call edits workspace files;
	// WritesUnknown when some written path could not be named.
	Writes        bool
	WritesUnknown bool
	// Why explains the shell analysis, when there was one.
	Why []string
}

// Reads reports whether the call reads a file's contents.
func (c Classification) Reads() bool { return slices.Contains(c.Classes, ClassFileRead) }

// Classify works out a call's classes and files. declared are classes the
// host stated itself (neutral events); dir resolves relative paths.
func (g *Gate) Classify(tool string, input map[string]any, declared []string, dir string) Classification {
	c := Classification{Tool: tool}
	var entry *ToolEntry
	if n, ok := g.NexusName(tool); ok {
		c.Nexus = n
		c.Classes = union(g.nexus[n])
	} else if e, ok := g.host.Tools[tool]; ok {
		entry = e
		c.Classes = union(e.Classes)
	} else if name, classes, ok := g.pluginTool(tool); ok {
		c.Nexus = name
		c.Classes = union(classes)
	}
	c.Classes = union(c.Classes, declared)
	if entry != nil {
		for _, p := range entry.FileParams {
			if s, ok := input[p].(string); ok && s != "" {
				c.Files = append(c.Files, resolve(dir, s))
			}
		}
	} else if len(declared) > 0 {
		for _, p := range []string{"file_path", "path", "notebook_path", "file"} {
			if s, ok := input[p].(string); ok && s != "" {
				c.Files = append(c.Files, resolve(dir, s))
				break
			}
		}
	}
	shell := (*Shell)(nil)
	if entry != nil {
		shell = entry.Shell
	} else if slices.Contains(declared, "shell_command_exec") {
		shell = &Shell{Param: "command", Dialect: DialectPOSIX}
	}
	if shell != nil {
		raw, given := input[shell.Param]
		cmd, isText := raw.(string)
		switch {
		case shell.Dialect == DialectOpaque:
			c.Classes = union(c.Classes, []string{"file_modification"})
			c.Writes, c.WritesUnknown = true, true
			c.Why = []string{"commands of " + tool + " are not parsed; treated as writing"}
		case given && raw != nil && !isText:
			// A command nexus cannot read cannot be shown not to write.
			c.Classes = union(c.Classes, []string{"file_modification"})
			c.Writes, c.WritesUnknown = true, true
			c.Why = []string{shell.Param + " is not a string, so it could not be checked; treated as writing"}
		default:
			e := AnalyzeShell(cmd)
			if e.Writes {
				c.Classes = union(c.Classes, e.Classes)
				c.WritesUnknown = e.Unknown
				for _, t := range e.Targets {
					c.Files = append(c.Files, resolve(dir, t))
				}
				c.Why = e.Reasons
			}
		}
	}
	if a := g.analyzers[tool]; a != nil {
		e := a(input)
		c.Classes = union(c.Classes, e.Classes)
		for _, f := range e.Files {
			c.Files = append(c.Files, resolve(dir, f))
		}
		if e.Unknown {
			c.Classes = union(c.Classes, []string{"file_modification"})
			c.WritesUnknown = true
		}
		c.Why = append(c.Why, e.Why...)
	}
	for _, cl := range c.Classes {
		if IsFileWriteClass(cl) {
			c.Writes = true
		}
	}
	if c.Writes && len(c.Files) == 0 {
		c.WritesUnknown = true
	}
	return c
}

func resolve(dir, p string) string {
	if strings.HasPrefix(p, "~") || dir == "" && !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// NexusName maps a host tool name to the abstract nexus tool it is:
// mcp__<server>__nx_task_add, nx_task_add and task_add all give task_add.
func (g *Gate) NexusName(tool string) (string, bool) {
	name := tool
	if n := g.mcpName(tool); n != "" {
		name = n
	}
	if g.prefix != "" {
		if abs, ok := strings.CutPrefix(name, g.prefix); ok {
			if _, known := g.nexus[abs]; known {
				return abs, true
			}
		}
	}
	if _, known := g.nexus[name]; known && name == tool {
		return name, true
	}
	return "", false
}

// pluginTool looks a tool up among the plugins' tools, by the name nexus
// serves it under (after the host's mcp__<server>__ prefix).
func (g *Gate) pluginTool(tool string) (string, []string, bool) {
	if g.plugin == nil {
		return "", nil, false
	}
	name := tool
	if n := g.mcpName(tool); n != "" {
		name = n
	}
	classes, ok := g.plugin(name)
	return name, classes, ok
}

// Call is one tool call to decide.
type Call struct {
	Role string // bare agent role; "" = Lead
	Classification
}

// Verdict is the gate's decision.
type Verdict struct {
	Decision   string `json:"decision"`
	Rule       string `json:"rule,omitempty"`
	Capability string `json:"capability,omitempty"`
	Class      string `json:"class,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Check decides a call. tasksExist says whether .nexus/state/tasks.json
// exists; nexusDir is the .nexus directory (writes under it are exempt from
// the unplanned-edit rule).
func (g *Gate) Check(call Call, tasksExist bool, nexusDir string) Verdict {
	who := "Lead"
	if call.Role != "" {
		who = "the " + call.Role + " agent"
	}
	// 1. Capabilities.
	for _, capID := range g.Capabilities(call.Role) {
		cp, ok := g.core.Capability(capID)
		if !ok {
			continue
		}
		var hit []string
		for _, blocked := range cp.BlocksSemanticClasses {
			if slices.Contains(call.Classes, blocked) {
				hit = append(hit, blocked)
			}
		}
		if len(hit) > 0 {
			return Verdict{
				Decision:   Deny,
				Rule:       RuleCapability,
				Capability: capID,
				Class:      hit[0],
				Reason: fmt.Sprintf("nexus denied %s: %s has capability %s (%s), which blocks %s%s. %s",
					call.Tool, who, capID, cp.Intent, strings.Join(hit, " and "), g.detail(call), g.advice(capID)),
			}
		}
	}
	// 2. Configured extra denials.
	keys := []string{AnyKey, LeadKey}
	if call.Role != "" {
		keys = []string{AnyKey, call.Role}
	}
	for _, k := range keys {
		for _, name := range g.extraDenials[k] {
			if g.sameTool(name, call.Tool) {
				return Verdict{
					Decision: Deny,
					Rule:     RuleExtraDenial,
					Reason: fmt.Sprintf("nexus denied %s: the project configuration (gate.extra_denials.%s) denies this tool to %s. Ask Lead for another way, or change .nexus/nexus.yaml.",
						call.Tool, k, who),
				}
			}
		}
	}
	// 3. Unplanned edits.
	if g.unplanned != "off" && !tasksExist && call.Writes && !slices.Contains(call.Classes, ClassArtifactWrite) && !g.allUnder(call.Classification, nexusDir) {
		what := call.Tool
		if len(call.Files) > 0 {
			what += " of " + strings.Join(relTo(nexusDir, call.Files), ", ")
		}
		v := Verdict{
			Decision: Deny,
			Rule:     RuleUnplannedEdit,
			Reason: fmt.Sprintf("nexus denied %s: edits outside a planned task cycle are not allowed, and .nexus/state/tasks.json does not exist. Plan the work first ([plan], then [run], or register tasks with nx_task_add), or set gate.unplanned_edit to warn or off in .nexus/nexus.yaml.",
				what),
		}
		if g.unplanned == "warn" {
			v.Decision = Warn
			v.Reason = fmt.Sprintf("nexus warning: %s edits files outside a planned task cycle (.nexus/state/tasks.json does not exist); gate.unplanned_edit is warn, so it runs.", what)
		}
		return v
	}
	return Verdict{Decision: Allow}
}

func (g *Gate) detail(call Call) string {
	if len(call.Why) > 0 && call.Nexus == "" {
		return " (" + strings.Join(call.Why, "; ") + ")"
	}
	return ""
}

func (g *Gate) advice(capID string) string {
	switch capID {
	case "no_file_edit":
		return "Report the change you propose to Lead instead, or save a deliverable with " + g.ToolRef("artifact_write") + "."
	case "no_task_create":
		return "Ask Lead to add the task."
	case "no_task_update":
		return "Report the outcome to Lead, who updates or closes the task."
	case "no_shell_exec":
		return "Ask Lead to run the command."
	}
	return "Ask Lead to do it."
}

// ToolRef names a nexus tool the way the host shows it to the model: the
// host's prefix for nexus's MCP server (Options.ToolRefPrefix), the tool
// prefix, the abstract name.
func (g *Gate) ToolRef(abstract string) string {
	return g.refPrefix + g.prefix + abstract
}

// sameTool reports whether a configured tool name denotes the called tool:
// names compare after dropping an MCP host's mcp__<server>__ prefix and
// the nexus tool prefix, so nx_task_add, task_add and
// mcp__nexus__nx_task_add are one tool.
func (g *Gate) sameTool(configured, called string) bool {
	return configured == called || g.bare(configured) == g.bare(called)
}

func (g *Gate) bare(tool string) string {
	name := tool
	if n := g.mcpName(tool); n != "" {
		name = n
	}
	if g.prefix != "" {
		if abs, ok := strings.CutPrefix(name, g.prefix); ok && abs != "" {
			return abs
		}
	}
	return name
}

func (g *Gate) allUnder(c Classification, nexusDir string) bool {
	if c.WritesUnknown || len(c.Files) == 0 || nexusDir == "" {
		return false
	}
	for _, f := range c.Files {
		rel, err := filepath.Rel(nexusDir, f)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return false
		}
	}
	return true
}

func relTo(nexusDir string, files []string) []string {
	root := filepath.Dir(nexusDir)
	out := make([]string, len(files))
	for i, f := range files {
		if rel, err := filepath.Rel(root, f); err == nil && !strings.HasPrefix(rel, "..") {
			out[i] = filepath.ToSlash(rel)
		} else {
			out[i] = f
		}
	}
	return out
}

// Coverage maps every semantic class reached by a host's capability map
// and nexus's own to the concrete tools carrying it (nexus validate, tests
// and docs use it); nexus's tools are named prefix+name.
func Coverage(hm *Map, toolClasses map[string][]string, prefix string) (map[string][]string, error) {
	nm, err := NexusMap()
	if err != nil {
		return nil, err
	}
	nexus := map[string][]string{}
	for name, e := range nm.Tools {
		nexus[name] = union(e.Classes, toolClasses[name])
	}
	return coverage(hm, nexus, prefix), nil
}

// Coverage is the package's Coverage for this gate's host map and tools,
// nexus's named as the host shows them (ToolRef).
func (g *Gate) Coverage() map[string][]string {
	return coverage(g.host, g.nexus, g.ToolRef(""))
}

func coverage(hm *Map, nexus map[string][]string, prefix string) map[string][]string {
	out := map[string][]string{}
	add := func(class, tool string) {
		if !slices.Contains(out[class], tool) {
			out[class] = append(out[class], tool)
		}
	}
	if hm != nil {
		for name, e := range hm.Tools {
			for _, c := range e.Classes {
				add(c, name)
			}
			if e.Shell != nil {
				label := name + " (commands that write files)"
				if e.Shell.Dialect == DialectOpaque {
					label = name + " (any command: not parsed)"
				}
				for c := range fileWriteClasses {
					// sed -i is a partial edit; no shell command edits notebook cells.
					if c != "structured_document_edit" {
						add(c, label)
					}
				}
			}
		}
	}
	for name, classes := range nexus {
		for _, c := range classes {
			add(c, prefix+name)
		}
	}
	for c := range out {
		sort.Strings(out[c])
	}
	return out
}

// HostDenied lists the tools the gate denies on every call by an agent
// role (its effective capabilities and gate.extra_denials), by the names
// the host shows them under, sorted. A host that can hide tools from an
// agent (an agent file's list of disallowed tools) hides exactly these, so the agent
// never reaches for a tool the gate would refuse. Tools the gate decides
// per call (a posix shell whose command may or may not write) are not
// listed: the gate still checks them.
func (g *Gate) HostDenied(role string) []string {
	blocked := map[string]bool{}
	for _, capID := range g.Capabilities(role) {
		if cp, ok := g.core.Capability(capID); ok {
			for _, cl := range cp.BlocksSemanticClasses {
				blocked[cl] = true
			}
		}
	}
	hits := func(classes []string) bool {
		for _, c := range classes {
			if blocked[c] {
				return true
			}
		}
		return false
	}
	set := map[string]bool{}
	for name, e := range g.host.Tools {
		classes := e.Classes
		if e.Shell != nil && e.Shell.Dialect == DialectOpaque {
			// Never parsed, so every call counts as writing (Classify).
			classes = union(classes, []string{"file_modification"})
		}
		if hits(classes) {
			set[name] = true
		}
	}
	for name, classes := range g.nexus {
		if hits(classes) {
			set[g.ToolRef(name)] = true
		}
	}
	key := role
	if role == "" {
		key = LeadKey
	}
	for _, k := range []string{AnyKey, key} {
		for _, name := range g.extraDenials[k] {
			if _, ok := g.nexus[g.bare(name)]; ok {
				set[g.ToolRef(g.bare(name))] = true
			} else {
				set[name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
