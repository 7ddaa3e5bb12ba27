package setup

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// Host is Claude Code with what installing nexus into it and checking that
// installation take: claude.Host (what a hook needs) plus the Installer,
// Packager and HostChecker the install and doctor commands ask for. The
// setup lives in a package of its own so that a hook process, which
// needs claude.Host alone, does not link it.
type Host struct{ claude.Host }

// Install implements install.Installer: nexus's hooks, MCP servers, agents
// and skills (and, asked, its status line) in the scope's Claude Code
// files.
func (h Host) Install(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, true)
}

// Uninstall implements install.Installer: what Install wrote, and nothing
// else.
func (h Host) Uninstall(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, false)
}

func (h Host) apply(req installpkg.Request, install bool) ([]installpkg.Change, error) {
	o := InstallOptions{
		Scope: req.Scope, Project: req.Project, Home: req.Home, Command: req.Command,
		CoreDir: req.CoreDir, StatusLine: req.StatusLine, Nauro: req.Decisions,
		DryRun: req.DryRun, Force: req.Force, Now: req.Now, Version: req.Version, CoreVersion: req.CoreVersion,
	}
	if req.Scope == ScopeProject {
		o.Home = ""
	} else {
		o.Project = ""
	}
	// The agents and skills are rendered for uninstall too: their paths are
	// the only files either acts on (the record in the folder only says
	// which of them nexus wrote).
	var note *installpkg.Change
	if req.Catalog != nil {
		files, coreVersion, err := h.catalogFiles(req, "")
		switch {
		case err != nil && install:
			return nil, err
		case err != nil:
			dir, _ := ClaudeDir(o)
			note = &installpkg.Change{Path: dir, Notes: []string{"the agent and skill files are left in place: " + err.Error()}}
		default:
			o.Files, o.CoreVersion = files, coreVersion
		}
	}
	var changes []installpkg.Change
	var err error
	if install {
		changes, err = Install(o)
	} else {
		changes, err = Uninstall(o)
	}
	if note != nil {
		changes = append(changes, *note)
	}
	if install && err == nil {
		if both := bothScopes(req); both != nil {
			changes = append(changes, *both)
		}
	}
	return changes, err
}

// StatusLineHelp implements install.StatusLiner: Claude Code has a status
// line nexus can register. No backquotes: cobra would show the quoted
// words as the flag's value ("--statusline nexus statusline").
func (Host) StatusLineHelp() string {
	return "also register nexus's status line (the command nexus statusline) with the host"
}

// bothScopes warns, installing in one scope, when nexus's hooks are
// registered in the other too: Claude Code runs the hooks of both, so
// every event would reach nexus twice.
func bothScopes(req installpkg.Request) *installpkg.Change {
	other := InstallOptions{Scope: ScopeUser, Home: req.Home}
	if req.Scope == ScopeUser {
		other = InstallOptions{Scope: ScopeProject, Project: req.Project}
	}
	if other.Home == "" && other.Project == "" || req.Project == req.Home {
		return nil
	}
	r, err := Inspect(other)
	if err != nil || len(r.Hooks) == 0 {
		return nil
	}
	ch := installpkg.BothScopes(claude.Name, "nexus's hooks are registered", "Claude Code runs the hooks of both scopes", r.Settings, req)
	return &ch
}

// catalogFiles renders the distribution's agents and skills for the
// variant's names ("" = files under .claude, VariantPlugin = the plugin
// package).
func (h Host) catalogFiles(req installpkg.Request, variant string) ([]installpkg.OwnedFile, string, error) {
	p := h.Profile(host.Env{Project: req.Project, Home: req.Home, Variant: variant})
	c, err := req.Catalog(p)
	if err != nil {
		return nil, "", err
	}
	models, err := Models(req.Models)
	if err != nil {
		return nil, "", fmt.Errorf("render the agents and skills: %w", err)
	}
	files, err := CatalogFiles(c, CatalogOptions{Models: models, AgentPrefix: p.AgentPrefix, Nexus: ShellQuote(req.Command)})
	if err != nil {
		return nil, "", fmt.Errorf("render the agents and skills: %w", err)
	}
	return files, c.Version, nil
}

// CatalogFilesFor renders the agents and skills install writes into a
// scope's Claude Code folder (the doctor compares them with what is there).
func (h Host) CatalogFilesFor(req installpkg.Request) ([]installpkg.OwnedFile, string, error) {
	return h.catalogFiles(req, "")
}

// WritePackage implements install.Packager: the nexus plugin package with
// a local marketplace in dir (its own files, the agents and the skills),
// written or removed.
func (h Host) WritePackage(dir string, req installpkg.Request, install bool) ([]installpkg.Change, error) {
	o := InstallOptions{Command: req.Command, CoreDir: req.CoreDir, DryRun: req.DryRun, Force: req.Force, Now: req.Now, Version: req.Version}
	// Rendered for uninstall too: the package's files are exactly these
	// paths, whatever the record in the folder lists.
	files, err := h.packageFiles(req, &o)
	if err != nil {
		if install {
			return nil, err
		}
		return []installpkg.Change{{Path: dir, Notes: []string{"the plugin's files are left in place: " + err.Error()}}}, nil
	}
	return WritePlugin(dir, files, o, install)
}

// packageFiles renders the plugin package's files (its own, the agents and
// the skills) and sets o.CoreVersion.
func (h Host) packageFiles(req installpkg.Request, o *InstallOptions) ([]installpkg.OwnedFile, error) {
	if req.Catalog == nil {
		return nil, fmt.Errorf("the distribution could not be loaded")
	}
	rendered, coreVersion, err := h.catalogFiles(req, claude.VariantPlugin)
	if err != nil {
		return nil, err
	}
	own, err := PluginFiles(PluginOptions{Command: o.Command, CoreDir: o.CoreDir, Version: o.Version})
	if err != nil {
		return nil, err
	}
	// Inside a plugin, Claude Code names the MCP server's tools
	// mcp__plugin_nexus_nexus__* (the skills' notes name them too).
	for i := range rendered {
		rendered[i].Content = bytes.ReplaceAll(rendered[i].Content, []byte(claude.MCPToolPrefix), []byte(claude.PluginMCPPrefix))
	}
	o.CoreVersion = coreVersion
	return append(own, rendered...), nil
}

// PackageHint implements install.Packager.
func (Host) PackageHint(dir string) string {
	return fmt.Sprintf("plugin written; add it to Claude Code with:\n  claude plugin marketplace add %s\n  claude plugin install %s@%s\n", ShellQuote(filepath.Clean(dir)), claude.PluginName, PluginMarketplace)
}

// DoctorChecks implements doctor.HostChecker: nexus's registration in
// Claude Code's settings, the agents and skills install wrote, a canary
// PreToolUse through the registered hook and the MCP servers' handshake.
func (h Host) DoctorChecks(env doctor.HostEnv) []doctor.Check {
	probe := Probe{Executable: env.Executable, CoreDir: env.CoreDir, NoCore: env.NoCore,
		Find: func() *Registered { return FindRegistered(env.Project, env.Home, env.Executable) }}
	var render func() ([]installpkg.OwnedFile, string, error)
	if env.Install.Catalog != nil {
		req := env.Install
		req.Project, req.Home, req.Command = env.Project, env.Home, env.Executable
		render = func() ([]installpkg.OwnedFile, string, error) { return h.CatalogFilesFor(req) }
	}
	return []doctor.Check{
		ClaudeInstall{Project: env.Project, Home: env.Home, Executable: env.Executable, ChosenCore: env.ChosenCore},
		ClaudeCatalog{Project: env.Project, Home: env.Home, Executable: env.Executable, Version: env.Version, ChosenCore: env.ChosenCore, Render: render},
		HookCanary{Probe: probe},
		MCPInitialize{Probe: probe},
	}
}

// InstallHint implements the commands' after-install hint: what to do
// once install (or uninstall) wrote its files.
func (Host) InstallHint(install bool) string {
	if !install {
		return "Restart Claude Code (or run /hooks and /mcp in it) so it stops running nexus.\n"
	}
	return "Restart Claude Code so it loads nexus's hooks, MCP servers, agents and skills; then `nexus doctor` checks the setup, and /nx-setup in Claude Code walks through the rest.\n"
}

// InstallHelp is the help of `nexus install claude` (install) and
// `nexus uninstall claude`.
func (Host) InstallHelp(install bool) string {
	if !install {
		return `Remove what "nexus install claude" wrote: the hook entries marked --managed, the status
line it registered, the MCP servers "nexus" and "nauro" when they run nexus, and the agent and
skill files nexus renders from the distribution in use when nexus-install.json says nexus wrote
them and they are unchanged (--force removes edited ones too, keeping a copy). A settings file
left empty is removed.

Everything else stays as it is: a record entry naming any other file is reported, never acted
on, and nothing is written or removed through a symlink. The backups nexus made of a file
(<file>.nexus-backup-<time>) are removed once the file is restored and holds everything they
hold; any other backup is named, with why it stays.`
	}
	return `Register nexus with Claude Code.

"nexus install claude" merges nexus's hook entries (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, PostToolUseFailure, SubagentStart, SubagentStop, SessionEnd, each running
"nexus hook --host claude --managed EVENT") into Claude Code's settings file, and two MCP
servers into its MCP servers file: "nexus" ("nexus mcp --without decisions", the nx_* tools)
and "nauro" ("nexus mcp --only decisions", the decision store's tools, as Nauro names them;
with decisions.enabled off, "nexus" alone serves everything):

  --scope project   .claude/settings.json and .mcp.json in the project
  --scope user      ~/.claude/settings.json and ~/.claude.json

It also writes the distribution's agent catalog and skills into the scope's Claude Code
folder: agents/<id>.md for every role (name = the role id, model from its model_tier
through claude.models, disallowedTools from its capabilities through the gate's capability
map) and skills/<id>/SKILL.md for every skill plus nexus's setup skill nx-setup. Each file
it writes is recorded with its content hash in nexus-install.json in that folder. Restart
Claude Code afterwards so it loads them; /nx-setup then walks through the rest.

It prints the diff of every file it changes. Before changing a file that holds anything
besides nexus's own entries it keeps a copy of it (<file>.nexus-backup-<time>); uninstall
removes those copies again once the file is restored. Running it again changes nothing;
after nexus or the distribution changed it updates the agents and skills (--dry-run shows
the diff and writes nothing). Entries and files it did not write are never touched or
removed, and an agent or skill file edited since nexus wrote it is left alone (and named)
unless --force is given. It acts only on the files it renders itself (a record entry naming
any other file is reported and left alone) and refuses, naming it, any symlink on the way to
them. Installing in one scope while nexus's hooks are in the other is warned about: Claude
Code would run both.`
}
