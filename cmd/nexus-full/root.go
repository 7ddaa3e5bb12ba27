package main

import (
	"fmt"
	"sort"
	"sync"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/vocabulary"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is one of nexus's commands. hot commands run often (on every
// tool call, after every assistant message): when the first argument names
// one, the root is built with that command alone, so a hook pays for
// nothing else.
type command struct {
	name string
	hot  bool
	new  func(*app) *cobra.Command
}

// commands lists nexus's commands, registered in this order.
var commands = []command{
	{"version", true, newVersionCmd},
	{"hook", true, newHookCmd},
	{"statusline", true, newStatusLineCmd},
	{"mcp", false, newMCPCmd},
	{"install", false, newInstallCmd},
	{"uninstall", false, newUninstallCmd},
	{"doctor", false, newDoctorCmd},
	{"validate", false, newValidateCmd},
	{"conformance", false, newConformanceCmd},
	{"tags", false, newTagsCmd},
	{"memory", false, newMemoryCmd},
	{"decision", false, newDecisionCmd},
	{"view", false, newViewCmd},
	{"state", false, newStateCmd},
	{"plugin", false, newPluginCmd},
	{"core", false, newCoreCmd},
	{"config", false, newConfigCmd},
}

// isHot reports whether name is a hot command.
func isHot(name string) bool {
	for _, c := range commands {
		if c.hot && c.name == name {
			return true
		}
	}
	return false
}

// app is what every command shares: the global flags and the composition
// root (harness/compose) built from them on first use.
type app struct {
	root *cobra.Command

	projectFlag string
	coreFlag    string
	jsonOut     bool

	// Set by a command before it first asks for the composition root.
	// lazyCore defers decoding the distribution's manifest to first use
	// (hook processes; see vocabulary.OpenManifest); host is the host the
	// command serves.
	lazyCore bool
	host     host.Host
	hostEnv  host.Env
	// hostDoor marks the doors a host runs (hook, mcp, statusline): they
	// go on without a configuration file that cannot be parsed and show
	// the problem instead of stopping (compose.Options.KeepGoing); quiet
	// keeps the configuration's warnings off stderr (the hook and the
	// status line show them in the session instead).
	hostDoor, quiet bool

	once sync.Once
	cr   *compose.Root
	err  error
}

// newRootCmdFor builds the root for the given arguments (see command.hot).
func newRootCmdFor(args []string) *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:   "nexus",
		Short: "A harness for AI coding agents, built on the nexus-core contracts",
		Long: `nexus keeps a project's .nexus/ state for a coding-agent host (Claude Code first):
the host runs "nexus hook" on every lifecycle event and talks to "nexus mcp" for tools.

nexus-core 0.10.0 is built in, so nothing else needs installing. In a project:

  nexus install claude   register nexus with Claude Code (then restart Claude Code)
  nexus doctor           check the whole setup, with how to fix each problem

Another nexus-core distribution can be chosen with --core DIR, NEXUS_CORE_DIR, core.dir in
.nexus/nexus.yaml, or @moreih29/nexus-core in the project's node_modules ("nexus version"
says which one is in use and why). Configuration: "nexus config keys"; a key nexus does not
know or a bad value is a warning, and that key keeps its default.

Exit status, the same for every command: 0 done; 1 failed, or found problems; 2 called
wrongly (an unknown command or flag, a missing or extra argument, a flag outside its values);
3 a configuration file cannot be read or parsed (hook, mcp and statusline go on without it
and show the problem instead). "nexus hook" always exits 0: its answer is the reply.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	pf := root.PersistentFlags()
	addFlags(pf, hot.GlobalFlags(&a.projectFlag, &a.coreFlag, &a.jsonOut))
	a.root = root
	root.SetHelpCommand(helpCommand(root))
	for _, c := range commands {
		if len(args) == 0 || !isHot(args[0]) || c.name == args[0] {
			root.AddCommand(c.new(a))
		}
	}
	failLoudly(root)
	return root
}

// globals are the global flags as the hot commands take them.
func (a *app) globals() hot.Globals {
	g := hot.Globals{Project: a.projectFlag, Flags: pflags{a.root.PersistentFlags()}, JSON: a.jsonOut}
	if !a.quiet {
		stderr := a.root.ErrOrStderr()
		g.Warn = func(e *config.Error) { fmt.Fprintln(stderr, "nexus: warning:", e.Text()) }
	}
	return g
}

// compose returns the composition root of this command line, built once:
// the project (--project, which must be a folder, else the one the working
// directory belongs to), the configuration's layers with the bound flags,
// the host the command serves.
func (a *app) compose() (*compose.Root, error) {
	a.once.Do(func() {
		o, err := hot.ComposeOptions(a.globals())
		if err != nil {
			a.err = err
			return
		}
		o.LazyCore, o.Host, o.HostEnv, o.KeepGoing = a.lazyCore, a.host, a.hostEnv, a.hostDoor
		// Only the hot commands (cmd/internal/hot, which build their own
		// options) keep resolutions for the front: every other command
		// leaves the user's cache folder as it is (a dry run writes
		// nothing).
		o.Config.Cache = ""
		a.cr = compose.New(o)
	})
	return a.cr, a.err
}

// Project returns the project root.
func (a *app) Project() (string, error) {
	r, err := a.compose()
	if err != nil {
		return "", err
	}
	return r.Project()
}

// Config returns the layered configuration (loaded once).
func (a *app) Config() (*config.Config, error) {
	r, err := a.compose()
	if err != nil {
		return nil, err
	}
	return r.Config()
}

// Settings returns the typed options of every part (read once).
func (a *app) Settings() (compose.Settings, error) {
	r, err := a.compose()
	if err != nil {
		return compose.Settings{}, err
	}
	return r.Settings()
}

// Dist locates the nexus-core distribution: --core, NEXUS_CORE_DIR,
// core.dir, node_modules, then the copy built into nexus.
func (a *app) Dist() (vocabulary.Dist, error) {
	r, err := a.compose()
	if err != nil {
		return vocabulary.Dist{}, err
	}
	return r.Dist()
}

func versionLine() string { return hot.VersionLine(version) }

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the nexus version, the nexus-core versions it implements, and the distribution in use",
		Long: `Print the nexus version, the nexus-core versions it implements, the nexus-core version built
into it, and the distribution it would use here (and where that choice came from: --core,
NEXUS_CORE_DIR, core.dir, node_modules, or built in).

When a configuration file cannot be read or parsed it still prints the version, then says
which file does not load, and exits 3 like every command that reads the configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return hot.Version(a.globals(), version, cmd.OutOrStdout())
		},
	}
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect nexus configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print every effective configuration key with where its value came from",
		Long: `Print every effective configuration key with where its value came from.

Layers, lowest to highest: built-in defaults < user file ($XDG_CONFIG_HOME/nexus/config.yaml,
else ~/.config/nexus/config.yaml) < project file (.nexus/nexus.yaml) < NEXUS_* environment
variables < command-line flags.

A key nexus does not know or whose value does not check is left out, with a warning on
stderr: it keeps the value of the layers below (its default when none sets it). A file that
cannot be read or parsed is left out whole: the keys of the other layers are shown, then the
file is named and the command exits 3.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// What loads is shown even when a file does not (exit 3 then).
			cfg, err := a.Config()
			if isConfigError(err) {
				if r, _ := a.compose(); r != nil && r.Loaded() != nil {
					cfg = r.Loaded()
				}
			}
			if cfg == nil {
				return err
			}
			entries := cfg.All()
			if a.jsonOut {
				problems := []string{}
				for _, p := range cfg.Problems() {
					problems = append(problems, p.Text())
				}
				if werr := writeJSON(cmd.OutOrStdout(), map[string]any{"files": cfg.Files, "keys": entries, "problems": problems}); werr != nil {
					return werr
				}
				return err
			}
			w := cmd.OutOrStdout()
			width := 0
			for _, e := range entries {
				width = max(width, len(e.Key))
			}
			for _, e := range entries {
				fmt.Fprintf(w, "%-*s  %-24s  %s\n", width, e.Key, formatValue(e.Value), e.Source)
			}
			return err
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "keys",
		Short: "List the configuration keys nexus understands",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys := append([]config.Key(nil), config.Keys...)
			sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
			if a.jsonOut {
				type row struct {
					Key, Type, Env, Help string
					Default              any
				}
				rows := make([]row, len(keys))
				for i, k := range keys {
					rows[i] = row{k.Name, k.Kind.String(), config.EnvName(k.Name), k.Help, k.Default}
				}
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			for _, k := range keys {
				env := config.EnvName(k.Name)
				if k.Kind == config.Map {
					env = "(files only)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s (%s, default %s, env %s)\n    %s\n", k.Name, k.Kind, formatValue(k.Default), env, k.Help)
			}
			return nil
		},
	})
	return cmd
}

func formatValue(v any) string { return config.FormatValue(v) }
