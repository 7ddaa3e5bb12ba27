package setup

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/opencode"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// Host is OpenCode with its setup: `nexus install opencode`, `nexus
// uninstall opencode` and the doctor's checks of what they wrote. It is
// registered in harness/host/setups; a hook links only the host itself
// (harness/host/opencode), not the plugin's template, the opencode.json
// editor or the doctor's MCP probe.
type Host struct{ opencode.Host }

// What `nexus install opencode` writes, per scope (CONFIG is the user's
// OpenCode folder: $XDG_CONFIG_HOME/opencode, default ~/.config/opencode):
//
//	project                          user
//	opencode.json (or .jsonc)        CONFIG/opencode.json (or .jsonc)   mcp.nexus (and mcp.nauro)
//	.opencode/plugins/nexus.js       CONFIG/plugins/nexus.js            the plugin (Plugin)
//	.opencode/agents/<id>.md         CONFIG/agents/<id>.md              the nine roles
//	.opencode/skills/<id>/SKILL.md   CONFIG/skills/<id>/SKILL.md        the skills
//	.opencode/nexus-install.json     CONFIG/nexus-install.json          the record of the three above
//
// Every other byte of opencode.json stays as it is (EditConfig). Nothing
// else of the folder is touched: in particular not its node_modules,
// package.json or package-lock.json, which OpenCode fills itself
// (docs/opencode.md says why install does not seed them).

// owned is how nexus keeps its plugin, agent and skill files with their
// record.
var owned = installpkg.Owned{}

// ConfigHomeEnv moves the user's config folders (default ~/.config).
const ConfigHomeEnv = "XDG_CONFIG_HOME"

// ProjectFolder is a project's OpenCode config folder.
const ProjectFolder = ".opencode"

// PluginPath is the plugin's path in a config folder.
var PluginPath = path.Join("plugins", PluginFile)

// UserConfigDir is the user's OpenCode config folder:
// $XDG_CONFIG_HOME/opencode (an absolute XDG_CONFIG_HOME), else
// ~/.config/opencode.
func UserConfigDir(home string, getenv func(string) string) string {
	if getenv != nil {
		if d := getenv(ConfigHomeEnv); d != "" && filepath.IsAbs(d) {
			return filepath.Join(filepath.Clean(d), "opencode")
		}
	}
	return filepath.Join(home, ".config", "opencode")
}

// Folders are the files of one scope.
type Folders struct {
	Scope string
	// Project is the project root (project scope).
	Project string
	// Config is the scope's OpenCode config folder (plugins/, agents/,
	// skills/, the record); ConfigFileDir the folder of its opencode.json
	// (the project root, or Config for the user).
	Config, ConfigFileDir string
}

// ScopeFolders returns the folders of a scope. The user's are resolved
// through symlinks (kept in a dotfiles folder, they are written where they
// lead); a project's are not, since nothing may lead out of it.
func ScopeFolders(scope, project, home string, getenv func(string) string) (Folders, error) {
	f := Folders{Scope: scope}
	switch scope {
	case installpkg.ScopeProject, "":
		if project == "" {
			return f, errors.New("project scope needs the project folder")
		}
		f.Scope, f.Project = installpkg.ScopeProject, project
		f.Config, f.ConfigFileDir = filepath.Join(project, ProjectFolder), project
	case installpkg.ScopeUser:
		if home == "" {
			return f, errors.New("user scope needs the home folder")
		}
		f.Config = installpkg.Resolve(UserConfigDir(home, getenv))
		f.ConfigFileDir = f.Config
	default:
		return f, fmt.Errorf("unknown scope %q: use project or user", scope)
	}
	return f, nil
}

// Install implements install.Installer.
func (h Host) Install(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, true)
}

// Uninstall implements install.Installer: what Install wrote, and nothing
// else.
func (h Host) Uninstall(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, false)
}

// HookArgs are the plugin's nexus command lines: the long-lived child and
// the one process per hook. A project's plugin names its project, so
// OpenCode started in a subfolder still serves it; coreDir (when set) is
// the distribution the user chose.
func HookArgs(project, coreDir string) (serve, once []string) {
	var extra []string
	if project != "" {
		extra = append(extra, "--project", project)
	}
	if coreDir != "" {
		extra = append(extra, "--core", coreDir)
	}
	serve = append(append([]string{}, DefaultServeArgs...), extra...)
	once = append(append([]string{}, DefaultCallArgs...), extra...)
	return serve, once
}

// ServerArgs are the arguments of nexus's MCP server entries: "nexus"
// (serving everything, or all but the decision store when it is served on
// its own as "nauro") and "nauro". The servers run with OpenCode's
// harness id, as its hooks do.
func ServerArgs(coreDir string, nauro bool) (nexusArgs, nauroArgs []string) {
	nexusArgs = []string{"mcp", "--host", opencode.Name}
	if nauro {
		nexusArgs = append(nexusArgs, "--without", decisionsapi.Name)
	}
	nauroArgs = []string{"mcp", "--host", opencode.Name, "--only", decisionsapi.Name}
	if coreDir != "" {
		nexusArgs = append(nexusArgs, "--core", coreDir)
		nauroArgs = append(nauroArgs, "--core", coreDir)
	}
	return nexusArgs, nauroArgs
}

// emptyConfig is the file EditConfig starts from when there is none: an
// install that created it leaves it behind this way on uninstall, and it
// goes.
var emptyConfig = []byte("{}\n")

func (h Host) apply(req installpkg.Request, install bool) ([]installpkg.Change, error) {
	if install && req.Command == "" {
		return nil, errors.New("no nexus executable to register")
	}
	if install && !filepath.IsAbs(req.Command) {
		return nil, fmt.Errorf("the nexus executable must be an absolute path for OpenCode's plugin and MCP servers, not %q", req.Command)
	}
	if req.StatusLine {
		return nil, errors.New("--statusline: OpenCode has no status line nexus can register")
	}
	f, err := ScopeFolders(req.Scope, req.Project, req.Home, req.Getenv)
	if err != nil {
		return nil, err
	}
	// The owned files are rendered for uninstall too: their paths are the
	// only files either acts on (a record only says which of them nexus
	// wrote).
	files, coreVersion, notes, err := h.ownedFiles(req, f, install)
	if err != nil {
		return nil, err
	}
	w, err := openWriter(f)
	if err != nil {
		return nil, err
	}
	defer w.close()
	// The config file nexus edits: the one holding its entry, else the one
	// there is.
	cfgPath := ConfigFile(f.ConfigFileDir, func(p string) bool {
		n, err := w.a.NameOf(p)
		return err == nil && w.a.Exists(n)
	}, func(p string) bool {
		n, err := w.a.NameOf(p)
		if err != nil {
			return false
		}
		b, _, _ := w.a.Read(n, MaxConfigBytes)
		exists, _, _ := OwnedEntry(b, opencode.MCPServerName, req.Command)
		return exists
	})
	cfgName, err := w.a.NameOf(cfgPath)
	if err != nil {
		return nil, err
	}
	// Every name this run may write or remove is checked before the first
	// write: a symlink on the way refuses the whole run.
	names := []string{cfgName}
	if files != nil {
		names = append(names, installpkg.OwnedNames(w.prefix, files)...)
	}
	for _, n := range names {
		if err := w.a.CheckPlain(n); err != nil {
			return nil, err
		}
	}
	o := req.Options
	if coreVersion != "" {
		o.CoreVersion = coreVersion
	}
	var changes []installpkg.Change
	nexusArgs, nauroArgs := ServerArgs(req.CoreDir, req.Decisions)
	restore := configRestore(req.Command)
	cfg, err := installpkg.EditFile(w.a, cfgName, MaxConfigBytes, o, restore, func(before []byte, exists bool) ([]byte, bool, []string, error) {
		e := ConfigEdit{Executable: req.Command}
		if install {
			e.Nexus = &MCPServer{Command: append([]string{req.Command}, nexusArgs...)}
			if req.Decisions {
				e.Nauro = &MCPServer{Command: append([]string{req.Command}, nauroArgs...)}
			}
		}
		r, err := EditConfig(before, e)
		if err != nil {
			return nil, false, nil, fmt.Errorf("%s: %w", cfgPath, err)
		}
		// A file that holds nothing but what nexus starts from goes.
		remove := exists && !install && bytes.Equal(r.Content, emptyConfig)
		return r.Content, remove, r.Notes, nil
	})
	changes = append(changes, cfg)
	if err != nil {
		return changes, err
	}
	if !install {
		// The backups of opencode.json that hold nothing it does not hold
		// now go; the others are named.
		got, err := installpkg.PruneBackups(w.a, cfgName, o, restore)
		changes = append(changes, got...)
		if err != nil {
			return changes, err
		}
	}
	if files != nil {
		got, err := owned.Sync(w.a, w.prefix, files, o, install)
		changes = append(changes, got...)
		if err != nil {
			return changes, err
		}
	}
	if install {
		if both := bothScopes(f, req); both != nil {
			notes = append(notes, *both)
		}
	}
	return append(changes, notes...), nil
}

// bothScopes warns, installing in one scope, when the nexus plugin is in
// the other's config folder too: OpenCode loads both, so every hook would
// reach nexus twice (the doctor says so too).
func bothScopes(f Folders, req installpkg.Request) *installpkg.Change {
	other := installpkg.ScopeUser
	if req.Scope == installpkg.ScopeUser {
		other = installpkg.ScopeProject
	}
	if req.Project == "" || req.Home == "" {
		return nil
	}
	of, err := ScopeFolders(other, req.Project, req.Home, req.Getenv)
	if err != nil || installpkg.Resolve(of.Config) == installpkg.Resolve(f.Config) {
		return nil
	}
	file := filepath.Join(of.Config, filepath.FromSlash(PluginPath))
	data, ok, err := readFile(file, installpkg.MaxOwnedFile)
	if err != nil || !ok {
		return nil
	}
	if _, err := ReadPlugin(data); err != nil {
		return nil
	}
	ch := installpkg.BothScopes(opencode.Name, "the nexus plugin is installed", "OpenCode loads the plugins of both scopes", file, req)
	return &ch
}

// configRestore is what uninstall makes of an opencode.json
// (installpkg.Restore): the content without nexus's entries, nothing when
// only what nexus starts from is left.
func configRestore(executable string) installpkg.Restore {
	return func(content []byte) ([]byte, bool, error) {
		r, err := EditConfig(content, ConfigEdit{Executable: executable})
		if err != nil {
			return nil, false, err
		}
		keep := len(bytes.TrimSpace(r.Content)) > 0 && !bytes.Equal(r.Content, emptyConfig)
		return r.Content, keep, nil
	}
}

// ownedFiles renders the plugin, agents and skills (paths relative to the
// config folder) with the nexus-core version they come from. Without a catalog (a repair of
// the registration alone, or an uninstall whose distribution does not
// load) it returns nil: the owned files then stay as they are, since nexus
// acts only on files it derives.
func (h Host) ownedFiles(req installpkg.Request, f Folders, install bool) ([]installpkg.OwnedFile, string, []installpkg.Change, error) {
	if req.Catalog == nil {
		return nil, "", nil, nil
	}
	files, coreVersion, err := h.CatalogFiles(req, f)
	switch {
	case err != nil && install:
		return nil, "", nil, err
	case err != nil:
		return nil, "", []installpkg.Change{{Path: f.Config, Notes: []string{"the plugin, agent and skill files are left in place: " + err.Error()}}}, nil
	}
	return files, coreVersion, nil, nil
}

// CatalogFiles renders what install writes into a scope's config folder
// (paths relative to it): the plugin, the agents and the skills, sorted by
// path, and the nexus-core version they come from. The nexus command is
// req.Command ("" when uninstalling: only the paths matter then, so a
// placeholder is used).
func (h Host) CatalogFiles(req installpkg.Request, f Folders) ([]installpkg.OwnedFile, string, error) {
	p := h.Profile(host.Env{Project: f.Project, Home: req.Home})
	c, err := req.Catalog(p)
	if err != nil {
		return nil, "", err
	}
	models, err := Models(req.Models)
	if err != nil {
		return nil, "", fmt.Errorf("render the agents and skills: %w", err)
	}
	nexus := req.Command
	if nexus == "" || !filepath.IsAbs(nexus) {
		nexus = "/nexus"
	}
	serve, once := HookArgs(f.Project, req.CoreDir)
	plugin, err := Plugin(PluginOptions{Nexus: nexus, Project: f.Project, Version: req.Version, ServeArgs: serve, CallArgs: once})
	if err != nil {
		return nil, "", err
	}
	files := []installpkg.OwnedFile{{Path: PluginPath, Content: plugin}}
	for _, a := range c.Agents {
		b, err := AgentMD(Agent{ID: a.ID, Description: a.Description, Body: strings.TrimRight(a.Body, "\n") + "\n\n" + agentNotes(c, a), Model: models[a.Tier], Deny: Permissions(a.Denied)})
		if err != nil {
			return nil, "", fmt.Errorf("render the agents and skills: %w", err)
		}
		files = append(files, installpkg.OwnedFile{Path: AgentPath(a.ID), Content: b})
	}
	for _, s := range c.Skills {
		b, err := SkillMD(Skill{ID: s.ID, Description: s.Description, Body: s.Body})
		if err != nil {
			return nil, "", fmt.Errorf("render the agents and skills: %w", err)
		}
		files = append(files, installpkg.OwnedFile{Path: SkillPath(s.ID), Content: b})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, c.Version, nil
}

// Models reads opencode.models: a model per model_tier, as OpenCode names
// one (provider/model); "inherit" or empty leaves the tier to the caller's
// model (the default for every tier).
func Models(configured map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for tier, v := range configured {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("config opencode.models.%s: expected a model as OpenCode names one (provider/model) or inherit, not %v", tier, v)
		}
		s = strings.TrimSpace(s)
		if s == "" || s == "inherit" {
			continue
		}
		if i := strings.IndexByte(s, '/'); i <= 0 || i == len(s)-1 {
			return nil, fmt.Errorf("config opencode.models.%s: OpenCode names a model provider/model (for example anthropic/claude-sonnet-4-5), not %q", tier, s)
		}
		out[tier] = s
	}
	return out, nil
}

// Permissions are the OpenCode permission keys an agent file denies, from
// the tools the gate denies the role on every call (catalog.Agent.Denied,
// OpenCode's names): "edit" when write, edit and apply_patch are all
// denied (OpenCode asks that one key for all three, so when the role may
// use one of them none is hidden and the gate refuses the others), and
// every other denied tool by its own id, nexus's MCP tools included
// (nexus_nx_task_add). OpenCode then does not offer those tools; the gate
// still checks every call, shell commands that write files included.
func Permissions(denied []string) []string {
	var out []string
	edits := 0
	for _, t := range denied {
		switch {
		case slices.Contains(opencode.EditTools, t):
			edits++
		case opencode.CapabilityMap().Tools[t] != nil && slices.Contains(opencode.CapabilityMap().Tools[t].Classes, "mcp_resource_read"):
			// Governed by the "read" key together with the read tool.
		default:
			out = append(out, t)
		}
	}
	if edits == len(opencode.EditTools) {
		out = append(out, "edit")
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// hiddenBy lists the tools permission keys hide, sorted.
func hiddenBy(keys []string) []string {
	var out []string
	for _, k := range keys {
		if k == "edit" {
			out = append(out, opencode.EditTools...)
		} else {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// agentNotes are the harness notes nexus-core's consumer guide (§7) asks
// for beside the neutral body.
func agentNotes(c *catalog.Catalog, a catalog.Agent) string {
	var b strings.Builder
	b.WriteString("## Working in OpenCode (nexus harness notes)\n\n")
	b.WriteString("- **Reporting to Lead**: you run as an OpenCode subagent that Lead started with the task tool, in a session of your own. Your final message is your report: OpenCode hands it to Lead as the task tool's result when you finish, and there is no other channel to Lead, so put everything Lead needs in it (in the report format above). Lead may continue your session with the task tool's task_id; answer the same way. Subagents do not talk to each other.\n")
	fmt.Fprintf(&b, "- **nexus tools**: tools named %s* in these instructions are nexus's MCP tools, listed in OpenCode as %s. The artifact tool is %s (filename, content): it saves deliverables under .nexus/state/artifacts/. The task list is %s (read-only for you unless Lead says otherwise); %s and %s belong to Lead.\n",
		c.ToolPrefix, c.ToolRef("*"), c.ToolRef("artifact_write"), c.ToolRef("task_list"), c.ToolRef("task_add"), c.ToolRef("task_update"))
	if len(a.Capabilities) > 0 {
		fmt.Fprintf(&b, "- **Capabilities** (%s): ", strings.Join(a.Capabilities, ", "))
		if hidden := hiddenBy(Permissions(a.Denied)); len(hidden) > 0 {
			fmt.Fprintf(&b, "OpenCode does not offer you %s. ", strings.Join(hidden, ", "))
		}
		b.WriteString("nexus's gate also checks every other call (a shell command that writes files, or a patch, counts as a file edit) and denies what your capabilities block; the denial says what to do instead, usually: report to Lead.\n")
	}
	b.WriteString("- **Project knowledge**: .nexus/memory/, .nexus/context/ and .nexus/rules/ hold the project's notes, context and rules; read what bears on your task.\n")
	return b.String()
}

// writer is the anchor a scope's files are written beneath: the project
// (nothing in it may be a symlink), or the filesystem root for the user's
// folder, which may lead into a dotfiles folder (resolved), inside which
// nothing nexus touches may be a symlink.
type writer struct {
	a *installpkg.Anchor
	// prefix is the config folder beneath the anchor.
	prefix string
}

func openWriter(f Folders) (*writer, error) {
	dir := string(filepath.Separator)
	if f.Scope == installpkg.ScopeProject {
		dir = f.Project
	}
	a, err := installpkg.OpenAnchor(dir, false)
	if err != nil {
		return nil, err
	}
	w := &writer{a: a}
	if w.prefix, err = a.NameOf(f.Config); err != nil {
		a.Close()
		return nil, err
	}
	if f.Scope == installpkg.ScopeUser {
		a.PlainFrom = w.prefix
	}
	return w, nil
}

func (w *writer) close() { w.a.Close() }

// InstallHelp is the help of `nexus install opencode` (install) and
// `nexus uninstall opencode`.
func (Host) InstallHelp(install bool) string {
	if !install {
		return `Remove what "nexus install opencode" wrote: the "nexus" (and "nauro") MCP servers in
opencode.json when they run nexus (every other byte of the file is kept; a file nexus created
and left empty goes), and the plugin, agent and skill files nexus renders from the
distribution in use when nexus-install.json says nexus wrote them and they are unchanged.
Nothing is written or removed through a symlink. The backups nexus made of opencode.json
(<file>.nexus-backup-<time>) are removed once the file is restored and holds everything they
hold; any other backup is named, with why it stays.`
	}
	return `Register nexus with OpenCode.

"nexus install opencode" writes, in the scope's OpenCode folders:

  --scope project   opencode.json (or opencode.jsonc) in the project, and .opencode/
  --scope user      $XDG_CONFIG_HOME/opencode (default ~/.config/opencode)

  opencode.json          mcp.nexus running "nexus mcp --host opencode" (and mcp.nauro for the
                         decision store); every other byte of the file is kept
  plugins/nexus.js       the plugin that hands OpenCode's hooks to nexus (a long-lived
                         "nexus hook --host opencode --serve", else one process per hook) and
                         applies the answers: context for the model, refused tool calls
  agents/<id>.md         the nine roles as subagents (the role's body as the prompt, model per
                         model_tier from opencode.models, none by default; permission: deny for
                         the tools the role may never use)
  skills/<id>/SKILL.md   the skills (nx-plan, nx-run, nx-sync, nx-init)

Each file in the folder is recorded with its content hash in nexus-install.json there. It
does not touch the folder's node_modules or package-lock.json: on its first start with a
plugin OpenCode installs its plugin package there from the npm registry (once, online).

It prints the diff of every file it changes. Before changing opencode.json when it holds
anything besides nexus's own entries it keeps a copy of it (<file>.nexus-backup-<time>);
uninstall removes those copies again once the file is restored. Running it again changes
nothing (--dry-run shows the diff and writes nothing). Entries and files it did not write are
never touched, a file edited since nexus wrote it is left alone (and named) unless --force is
given, and any symlink on the way to a file of the project is refused. Restart OpenCode
afterwards.`
}
