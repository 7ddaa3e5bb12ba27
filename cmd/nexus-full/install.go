package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/host/setups"
	installpkg "github.com/nexus-harness/nexus/harness/install"
)

type installFlags struct {
	scope      string
	dryRun     bool
	command    string
	force      bool
	statusLine bool
	trustHooks bool
	pkg        string
}

// installHelp is a host's help for `nexus install <host>` and
// `nexus uninstall <host>`.
type installHelp interface {
	InstallHelp(install bool) string
}

// installHint is what a host says once install (or uninstall) wrote its
// files: how to make the host load them.
type installHint interface {
	InstallHint(install bool) string
}

func newInstallCmd(a *app) *cobra.Command   { return newInstallerCmd(a, true) }
func newUninstallCmd(a *app) *cobra.Command { return newInstallerCmd(a, false) }

// newInstallerCmd is `nexus install` (or uninstall) with a subcommand per
// host that can be installed into (installpkg.Installer).
func newInstallerCmd(a *app, doInstall bool) *cobra.Command {
	use, short := "install", "Register nexus with a coding-agent host"
	if !doInstall {
		use, short = "uninstall", "Remove what \"nexus install\" registered with a host"
	}
	cmd := &cobra.Command{Use: use, Short: short, Long: short + "."}
	for _, h := range setups.All() {
		inst, ok := h.(installpkg.Installer)
		if !ok {
			continue
		}
		var fl installFlags
		sub := &cobra.Command{
			Use:   h.Name(),
			Short: short + " (" + h.Name() + ")",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return runInstall(cmd, a, h.Name(), inst, fl, doInstall)
			},
		}
		if hh, ok := h.(installHelp); ok {
			sub.Long = hh.InstallHelp(doInstall)
		}
		f := sub.Flags()
		scopeHelp := "where to install: project or user"
		if !doInstall {
			scopeHelp = "where to uninstall from: project or user"
		}
		f.StringVar(&fl.scope, "scope", installpkg.ScopeProject, scopeHelp)
		f.BoolVar(&fl.dryRun, "dry-run", false, "show the changes without writing anything")
		if _, ok := h.(installpkg.Packager); ok {
			pkgHelp := "instead of registering in a scope, write a plugin package for the host in this folder"
			if !doInstall {
				pkgHelp = "instead of a scope, remove the plugin package nexus wrote in this folder"
			}
			f.StringVar(&fl.pkg, "plugin", "", pkgHelp)
		}
		forceHelp := "also replace agent and skill files edited since nexus wrote them, or that nexus did not write (a backup is kept)"
		if !doInstall {
			forceHelp = "also remove agent and skill files edited since nexus wrote them (a backup is kept)"
		}
		f.BoolVar(&fl.force, "force", false, forceHelp)
		if doInstall {
			f.StringVar(&fl.command, "command", "", "the nexus executable the entries run (default: this executable's absolute path)")
			if sl, ok := h.(installpkg.StatusLiner); ok {
				f.BoolVar(&fl.statusLine, "statusline", false, sl.StatusLineHelp())
			}
			if ht, ok := h.(installpkg.HookTruster); ok {
				f.BoolVar(&fl.trustHooks, "trust-hooks", false, ht.TrustHooksHelp())
			}
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

func runInstall(cmd *cobra.Command, a *app, hostName string, inst installpkg.Installer, fl installFlags, doInstall bool) error {
	if fl.pkg != "" {
		if cmd.Flags().Changed("scope") || fl.statusLine {
			return usagef("--plugin writes a plugin package: it takes no --scope or --statusline (a plugin cannot set the status line)")
		}
		return runPackage(cmd, a, hostName, inst.(installpkg.Packager), fl, doInstall)
	}
	if fl.scope != installpkg.ScopeProject && fl.scope != installpkg.ScopeUser {
		return usagef("--scope must be project or user, not %q", fl.scope)
	}
	req, err := installRequest(a, hostName, fl, doInstall)
	if err != nil {
		return err
	}
	req.Scope = fl.scope
	// Both folders are named (the installer writes in its scope's, and
	// looks at the other for hooks that would run twice).
	proj, perr := a.Project()
	home, herr := os.UserHomeDir()
	if fl.scope == installpkg.ScopeProject && perr != nil {
		return perr
	}
	if fl.scope == installpkg.ScopeUser && herr != nil {
		return fmt.Errorf("find the home folder: %w", herr)
	}
	req.Project, req.Home = proj, home
	var changes []installpkg.Change
	if doInstall {
		changes, err = inst.Install(req)
	} else {
		changes, err = inst.Uninstall(req)
	}
	if perr := printChanges(cmd, a, fl, changes, err); perr != nil || err != nil {
		return perr
	}
	if h, ok := inst.(installHint); ok && !fl.dryRun && !a.jsonOut && anyChanged(changes) {
		fmt.Fprint(cmd.OutOrStdout(), h.InstallHint(doInstall))
	}
	return nil
}

func anyChanged(changes []installpkg.Change) bool {
	for _, ch := range changes {
		if ch.Changed {
			return true
		}
	}
	return false
}

// installRequest is what the host's installer is asked (compose.Root.
// InstallRequest) with the command line's command and options. When the
// configuration does not load, an uninstall still removes what the
// installer wrote (the bundled store's server included), leaving the
// derived files alone.
func installRequest(a *app, hostName string, fl installFlags, doInstall bool) (installpkg.Request, error) {
	r, err := a.compose()
	if err != nil {
		return installpkg.Request{}, err
	}
	req, err := r.InstallRequest(hostName)
	if err != nil && doInstall {
		return req, err
	}
	if err != nil && isConfigError(err) {
		// Removing nexus must work whatever the configuration says.
		fmt.Fprintf(a.root.ErrOrStderr(), "nexus: warning: the configuration does not load (%v); uninstall goes on: it removes what nexus wrote, and leaves the agent and skill files alone\n", err)
	}
	req.Command, req.StatusLine, req.TrustHooks, req.Getenv = fl.command, fl.statusLine, fl.trustHooks, os.Getenv
	req.DryRun, req.Force, req.Version = fl.dryRun, fl.force, version
	if req.Command == "" {
		exe, err := thisExecutable()
		if err != nil && doInstall {
			return req, err
		}
		req.Command = exe
	}
	return req, nil
}

// printChanges reports what install or uninstall did (or would do).
func printChanges(cmd *cobra.Command, a *app, fl installFlags, changes []installpkg.Change, err error) error {
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
			switch {
			case fl.dryRun:
			case ch.Removed:
				fmt.Fprintf(w, "%s: removed\n", ch.Path)
			case ch.Backup != "":
				fmt.Fprintf(w, "%s: updated (previous content saved as %s)\n", ch.Path, ch.Backup)
			case ch.Created:
				fmt.Fprintf(w, "%s: written\n", ch.Path)
			default:
				fmt.Fprintf(w, "%s: updated\n", ch.Path)
			}
		}
		for _, n := range ch.Notes {
			fmt.Fprintf(w, "%s: note: %s\n", ch.Path, n)
		}
	}
	return err
}

// thisExecutable is the nexus a host should run: the front, nexus, beside
// this program when it is nexus-full (frontExecutable).
func thisExecutable() (string, error) {
	exe, err := frontExecutable()
	if err != nil {
		return "", fmt.Errorf("find the nexus executable: %w (pass --command)", err)
	}
	return exe, nil
}

// runPackage writes or removes the host's plugin package.
func runPackage(cmd *cobra.Command, a *app, hostName string, p installpkg.Packager, fl installFlags, doInstall bool) error {
	dir, err := filepath.Abs(fl.pkg)
	if err != nil {
		return fmt.Errorf("resolve --plugin %s: %w", fl.pkg, err)
	}
	req, err := installRequest(a, hostName, fl, doInstall)
	if err != nil {
		return err
	}
	if req.Command == "" {
		req.Command = "/nexus" // uninstalling, only the paths matter
	}
	if doInstall && !filepath.IsAbs(req.Command) {
		return usagef("--command must be an absolute path for a plugin (the host runs it from its plugin cache)")
	}
	changes, err := p.WritePackage(dir, req, doInstall)
	if perr := printChanges(cmd, a, fl, changes, err); perr != nil || err != nil {
		return perr
	}
	if doInstall && !fl.dryRun && !a.jsonOut {
		fmt.Fprint(cmd.OutOrStdout(), p.PackageHint(dir))
	}
	return nil
}
