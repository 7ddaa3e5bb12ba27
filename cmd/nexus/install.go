package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/config"
)

func init() {
	register(func(a *app) *cobra.Command { return newInstallCmd(a, true) })
	register(func(a *app) *cobra.Command { return newInstallCmd(a, false) })
}

type installFlags struct {
	scope      string
	dryRun     bool
	command    string
	force      bool
	statusLine bool
	plugin     string
}

func newInstallCmd(a *app, install bool) *cobra.Command {
	var fl installFlags
	use, short, long := "install", "Register nexus with a coding-agent host", `Register nexus with a coding-agent host.

"nexus install claude" merges nexus's hook entries (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, PostToolUseFailure, SubagentStart, SubagentStop, SessionEnd, each running
"nexus hook --host claude --managed EVENT") into Claude Code's settings file, and the
"nexus mcp" server into its MCP servers file:

  --scope project   .claude/settings.json and .mcp.json in the project
  --scope user      ~/.claude/settings.json and ~/.claude.json

It also writes the distribution's agent catalog and skills into the scope's Claude Code
folder: agents/<id>.md for every role (name = the role id, model from its model_tier
through claude.models, disallowedTools from its capabilities through the gate's capability
map) and skills/<id>/SKILL.md for every skill plus nexus's setup skill nx-setup. Each file
it writes is recorded with its content hash in nexus-install.json in that folder.

It prints the diff of every file it changes and keeps a copy of the old content beside it
(<file>.nexus-backup-<time>). Running it again changes nothing; after nexus or the
distribution changed it updates the agents and skills (--dry-run shows the diff and writes
nothing). Entries and files it did not write are never touched or removed, and an agent or
skill file edited since nexus wrote it is left alone (and named) unless --force is given.
It acts only on the files it renders itself (a record entry naming any other file is
reported and left alone) and refuses, naming it, any symlink on the way to them.`
	if !install {
		use, short, long = "uninstall", "Remove what \"nexus install\" registered with a host", `Remove what "nexus install claude" wrote: hook entries marked --managed, the "nexus"
MCP server when it runs nexus, and the agent and skill files nexus renders from the
distribution in use when nexus-install.json says nexus wrote them and they are unchanged.
Everything else stays as it is: a record entry naming any other file is reported, never
acted on, and nothing is written or removed through a symlink. Diffs and backups as for
install.`
	}
	cmd := &cobra.Command{Use: use, Short: short, Long: long}
	sub := &cobra.Command{
		Use:   "claude",
		Short: short + " (Claude Code)",
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInstall(cmd, a, fl, install)
		},
	}
	sub.Flags().StringVar(&fl.scope, "scope", claude.ScopeProject, "where to install: project or user")
	sub.Flags().BoolVar(&fl.dryRun, "dry-run", false, "show the changes without writing anything")
	sub.Flags().StringVar(&fl.plugin, "plugin", "", "instead of registering in a scope, write (or remove) a Claude Code plugin package with a local marketplace in this folder")
	sub.Flags().BoolVar(&fl.force, "force", false, "also replace (or remove) agent and skill files edited since nexus wrote them, or that nexus did not write (a backup is kept)")
	if install {
		sub.Flags().StringVar(&fl.command, "command", "", "the nexus executable the entries run (default: this executable's absolute path)")
		sub.Flags().BoolVar(&fl.statusLine, "statusline", false, "also register `nexus statusline` as Claude Code's status line")
	}
	cmd.AddCommand(sub)
	return cmd
}

func runInstall(cmd *cobra.Command, a *app, fl installFlags, install bool) error {
	if fl.plugin != "" {
		if cmd.Flags().Changed("scope") || fl.statusLine {
			return usagef("--plugin writes a plugin package: it takes no --scope or --statusline (a plugin cannot set the status line)")
		}
		return runPlugin(cmd, a, fl, install)
	}
	if fl.scope != claude.ScopeProject && fl.scope != claude.ScopeUser {
		return usagef("--scope must be project or user, not %q", fl.scope)
	}
	o := claude.InstallOptions{Scope: fl.scope, DryRun: fl.dryRun, Command: fl.command, Force: fl.force, Version: version, StatusLine: fl.statusLine}
	if cfg, err := a.Config(); err == nil {
		// The bundled decision store gets its own server entry, "nauro".
		o.Nauro = cfg.Bool("decisions.enabled")
	}
	if fl.scope == claude.ScopeProject {
		proj, err := a.Project()
		if err != nil {
			return err
		}
		o.Project = proj
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("find the home folder: %w", err)
		}
		o.Home = home
	}
	if o.Command == "" {
		exe, err := thisExecutable()
		if err != nil && install {
			return err
		}
		o.Command = exe
	}
	// The agents and skills are rendered for uninstall too: their paths are
	// the only files either command acts on (the record in the folder only
	// says which of them nexus wrote).
	files, coreVersion, err := renderCatalog(a, o.Command, "")
	if err != nil {
		if install {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "nexus: the agent and skill files are left in place: %v\n", err)
	} else {
		o.Files, o.CoreVersion = files, coreVersion
	}
	if install {
		if o.CoreDir, err = chosenCoreDir(a); err != nil {
			return err
		}
	}
	var changes []claude.FileChange
	if install {
		changes, err = claude.Install(o)
	} else {
		changes, err = claude.Uninstall(o)
	}
	return printChanges(cmd, a, fl, changes, err)
}

// printChanges reports what install or uninstall did (or would do).
func printChanges(cmd *cobra.Command, a *app, fl installFlags, changes []claude.FileChange, err error) error {
	if a.jsonOut {
		if werr := writeJSON(cmd.OutOrStdout(), map[string]any{"dry_run": fl.dryRun, "files": changes}); werr != nil {
			return werr
		}
		return err
	}
	w := cmd.OutOrStdout()
	if fl.dryRun {
		fmt.Fprintln(w, "dry run: nothing is written")
	}
	for _, ch := range changes {
		switch {
		case !ch.Changed && len(ch.Notes) == 0:
			fmt.Fprintf(w, "%s: already up to date\n", ch.Path)
		case !ch.Changed:
		default:
			fmt.Fprint(w, ch.Diff)
			if ch.Removed && !fl.dryRun {
				fmt.Fprintf(w, "%s: removed\n", ch.Path)
			} else if ch.Backup != "" {
				fmt.Fprintf(w, "%s: updated (previous content saved as %s)\n", ch.Path, ch.Backup)
			} else if !fl.dryRun {
				fmt.Fprintf(w, "%s: written\n", ch.Path)
			}
		}
		for _, n := range ch.Notes {
			fmt.Fprintf(w, "%s: note: %s\n", ch.Path, n)
		}
	}
	return err
}

// renderCatalog renders the distribution's agents and skills for Claude
// Code (see harness/catalog). agentPrefix is "" for .claude folders and
// "<plugin>:" inside a plugin.
func renderCatalog(a *app, nexus, agentPrefix string) ([]claude.OwnedFile, string, error) {
	core, err := a.Core()
	if err != nil {
		return nil, "", err
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, "", err
	}
	classes := map[string][]string{}
	for _, t := range tools.All() {
		classes[t.Name] = t.Classes
	}
	files, err := catalog.Claude(catalog.Options{Core: core, Config: cfg, ToolClasses: classes, AgentPrefix: agentPrefix, Nexus: claude.ShellQuote(nexus)})
	if err != nil {
		return nil, "", fmt.Errorf("render the agents and skills: %w", err)
	}
	out := make([]claude.OwnedFile, len(files))
	for i, f := range files {
		out[i] = claude.OwnedFile{Path: f.Path, Content: f.Content}
	}
	return out, core.Version(), nil
}

// chosenCoreDir is the distribution directory the registered commands must
// name: one chosen with --core, NEXUS_CORE_DIR or a user config file found
// through XDG_CONFIG_HOME, which Claude Code's environment (an IDE
// launcher, a bare shell) would not have. Locations the commands find by
// themselves (the project's config, ~/.config/nexus/config.yaml,
// node_modules, the built-in distribution) give "".
func chosenCoreDir(a *app) (string, error) {
	cfg, err := a.Config()
	if err != nil {
		return "", err
	}
	switch cfg.Source("core.dir").Layer {
	case config.LayerFlag, config.LayerEnv:
	case config.LayerUser:
		// A user file Claude Code also reads (HOME only) needs nothing; one
		// found through XDG_CONFIG_HOME may be invisible to it.
		bare := func(k string) (string, bool) {
			if k == "HOME" {
				return os.LookupEnv(k)
			}
			return "", false
		}
		if config.UserFile(nil) == config.UserFile(bare) {
			return "", nil
		}
	default:
		return "", nil
	}
	d, err := a.Dist()
	if err != nil || d.Dir == "" {
		return "", err
	}
	return filepath.Abs(d.Dir)
}

func thisExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the nexus executable: %w (pass --command)", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return exe, nil
}

// runPlugin writes or removes the Claude Code plugin package.
func runPlugin(cmd *cobra.Command, a *app, fl installFlags, install bool) error {
	dir, err := filepath.Abs(fl.plugin)
	if err != nil {
		return fmt.Errorf("resolve --plugin %s: %w", fl.plugin, err)
	}
	o := claude.InstallOptions{DryRun: fl.dryRun, Force: fl.force, Version: version, Command: fl.command}
	if o.Command == "" {
		if o.Command, err = thisExecutable(); err != nil {
			if install {
				return err
			}
			// Uninstalling, only the paths matter.
			o.Command = "/nexus"
		}
	}
	if install && !filepath.IsAbs(o.Command) {
		return usagef("--command must be an absolute path for a plugin (Claude Code runs it from its plugin cache)")
	}
	// Rendered for uninstall too: the package's files are exactly these
	// paths, whatever the record in the folder lists.
	files, err := pluginFiles(a, &o, install)
	if err != nil {
		if install {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "nexus: the plugin's files are left in place: %v\n", err)
		files = nil
	}
	changes, err := claude.WritePlugin(dir, files, o, install)
	if perr := printChanges(cmd, a, fl, changes, err); perr != nil || err != nil {
		return perr
	}
	if install && !fl.dryRun && !a.jsonOut {
		fmt.Fprintf(cmd.OutOrStdout(), "plugin written; add it to Claude Code with:\n  claude plugin marketplace add %s\n  claude plugin install %s@%s\n", claude.ShellQuote(dir), claude.PluginName, claude.PluginMarketplace)
	}
	return nil
}

// pluginFiles renders the plugin package's files (its own, the agents and
// the skills) and sets o.CoreDir and o.CoreVersion.
func pluginFiles(a *app, o *claude.InstallOptions, install bool) ([]claude.OwnedFile, error) {
	rendered, coreVersion, err := renderCatalog(a, o.Command, claude.PluginName+":")
	if err != nil {
		return nil, err
	}
	if install {
		if o.CoreDir, err = chosenCoreDir(a); err != nil {
			return nil, err
		}
	}
	own, err := claude.PluginFiles(claude.PluginOptions{Command: o.Command, CoreDir: o.CoreDir, Version: version})
	if err != nil {
		return nil, err
	}
	// Inside a plugin, Claude Code names the MCP server's tools
	// mcp__plugin_nexus_nexus__*.
	for i := range rendered {
		rendered[i].Content = bytes.ReplaceAll(rendered[i].Content, []byte("mcp__"+claude.MCPServerName+"__"), []byte(claude.PluginMCPPrefix))
	}
	o.CoreVersion = coreVersion
	return append(own, rendered...), nil
}
