package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/vocabulary"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// commandFactories holds the subcommands; each command file registers its
// own in init() so command files stay independent of each other.
var commandFactories []func(*app) *cobra.Command

func register(f func(*app) *cobra.Command) { commandFactories = append(commandFactories, f) }

// hotCommands are registered by name as well: when the first argument
// names one, the root is built with that command alone. `nexus hook` runs
// on every tool call, and building the whole command tree (the decision
// store's included) is time a hook would pay for nothing.
var hotCommands = map[string]func(*app) *cobra.Command{}

func registerHot(name string, f func(*app) *cobra.Command) {
	hotCommands[name] = f
	register(f)
}

// app is the state shared by every command: global flags and the lazily
// loaded configuration and distribution.
type app struct {
	root *cobra.Command

	projectFlag string
	// lazyCore defers decoding the distribution's manifest to first use
	// (hook processes; see vocabulary.OpenManifest).
	lazyCore bool
	coreFlag string
	jsonOut  bool
	// mcpScope is which tools `nexus mcp` serves (its --only/--without).
	mcpScope mcpScope

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error

	projOnce sync.Once
	project  string
	projErr  error
}

// newRootCmdFor builds the root for the given arguments (see hotCommands).
func newRootCmdFor(args []string) *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:   "nexus",
		Short: "A harness for AI coding agents, built on the nexus-core contracts",
		Long: `nexus keeps a project's .nexus/ state for a coding-agent host (Claude Code first):
the host runs "nexus hook" on every lifecycle event and talks to "nexus mcp" for tools.

Most commands need a nexus-core distribution: pass --core DIR, set NEXUS_CORE_DIR,
set core.dir in .nexus/nexus.yaml, or install @moreih29/nexus-core in the project.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&a.projectFlag, "project", "", "project root (default: nearest folder above the working directory holding .nexus/ or .git)")
	pf.StringVar(&a.coreFlag, "core", "", "nexus-core distribution directory (overrides NEXUS_CORE_DIR and core.dir)")
	pf.BoolVar(&a.jsonOut, "json", false, "print data as JSON where the command prints data")
	a.root = root
	root.SetHelpCommand(helpCommand(root))
	if len(args) > 0 && hotCommands[args[0]] != nil {
		root.AddCommand(hotCommands[args[0]](a))
	} else {
		for _, f := range commandFactories {
			root.AddCommand(f(a))
		}
	}
	failLoudly(root)
	return root
}

func versionLine() string {
	return fmt.Sprintf("nexus %s (nexus-core %s; built in: %s)", version, vocabulary.SupportedRange, vocabulary.BuiltinVersion)
}

// distUse describes the distribution nexus would use.
type distUse struct {
	Version string `json:"version,omitempty"`
	Where   string `json:"where,omitempty"`  // a directory, or "built-in nexus-core X"
	Source  string `json:"source,omitempty"` // --core, NEXUS_CORE_DIR, config core.dir in FILE, node_modules, built in
	Error   string `json:"error,omitempty"`  // why it cannot be used
	Builtin bool   `json:"builtin"`
}

func (u distUse) String() string {
	if u.Error != "" {
		return "not usable: " + u.Error
	}
	return fmt.Sprintf("nexus-core %s, %s (%s)", u.Version, u.Where, u.Source)
}

// inUse locates the distribution and reads the version from its manifest's
// first members (vocabulary.OpenManifestDist: no catalog decoding).
func inUse(a *app) distUse {
	d, err := a.Dist()
	if err != nil {
		return distUse{Error: err.Error()}
	}
	u := distUse{Where: d.Where(), Source: d.Source, Builtin: d.IsBuiltin()}
	c, err := vocabulary.OpenManifestDist(d)
	if err != nil {
		u.Error = err.Error()
		return u
	}
	u.Version = c.Version()
	return u
}

// flagKeys binds global flags to configuration keys.
var flagKeys = map[string]string{"core.dir": "core"}

// Project returns the project root.
func (a *app) Project() (string, error) {
	a.projOnce.Do(func() {
		if a.projectFlag != "" {
			p, err := filepath.Abs(a.projectFlag)
			if err != nil {
				a.projErr = fmt.Errorf("resolve --project %s: %w", a.projectFlag, err)
				return
			}
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				a.projErr = usagef("--project %s is not a directory", a.projectFlag)
				return
			}
			a.project = p
			return
		}
		wd, err := os.Getwd()
		if err != nil {
			a.projErr = fmt.Errorf("working directory: %w", err)
			return
		}
		a.project = harness.FindProject(wd)
	})
	return a.project, a.projErr
}

// Config returns the layered configuration (loaded once).
func (a *app) Config() (*config.Config, error) {
	a.cfgOnce.Do(func() {
		proj, err := a.Project()
		if err != nil {
			a.cfgErr = err
			return
		}
		a.cfg, a.cfgErr = config.Load(config.Options{
			ProjectDir: proj,
			Flags:      a.root.PersistentFlags(),
			FlagKeys:   flagKeys,
		})
	})
	return a.cfg, a.cfgErr
}

// Dist locates the nexus-core distribution: --core, NEXUS_CORE_DIR,
// core.dir, node_modules, then the copy built into nexus.
func (a *app) Dist() (vocabulary.Dist, error) {
	cfg, err := a.Config()
	if err != nil {
		return vocabulary.Dist{}, err
	}
	proj, _ := a.Project()
	return vocabulary.Locate(cfg.String("core.dir"), describeSource("core.dir", cfg.Source("core.dir")), proj)
}

func describeSource(key string, s config.Source) string {
	switch s.Layer {
	case config.LayerFlag:
		return s.Detail
	case config.LayerEnv:
		return s.Detail
	default:
		return fmt.Sprintf("config %s in %s", key, s.Detail)
	}
}

// Core loads the distribution's manifest.
func (a *app) Core() (*vocabulary.Core, error) {
	d, err := a.Dist()
	if err != nil {
		return nil, err
	}
	if a.lazyCore {
		return vocabulary.OpenManifestDist(d)
	}
	return vocabulary.LoadManifestDist(d)
}

func init() {
	registerHot("version", func(a *app) *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print the nexus version, the nexus-core versions it implements, and the distribution in use",
			Long: `Print the nexus version, the nexus-core versions it implements, the nexus-core version built
into it, and the distribution it would use here (and where that choice came from: --core,
NEXUS_CORE_DIR, core.dir, node_modules, or built in).`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				use := inUse(a)
				if a.jsonOut {
					return writeJSON(cmd.OutOrStdout(), struct {
						Version   string  `json:"version"`
						NexusCore string  `json:"nexus_core"`
						Builtin   string  `json:"builtin_nexus_core"`
						InUse     distUse `json:"distribution"`
					}{version, vocabulary.SupportedRange, vocabulary.BuiltinVersion, use})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\ndistribution: %s\n", versionLine(), use)
				return nil
			},
		}
	})
	register(newConfigCmd)
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect nexus configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print every effective configuration key with where its value came from",
		Long: `Print every effective configuration key with where its value came from.

Layers, lowest to highest: built-in defaults < user file ($XDG_CONFIG_HOME/nexus/config.yaml,
else ~/.config/nexus/config.yaml) < project file (.nexus/nexus.yaml) < NEXUS_* environment
variables < command-line flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.Config()
			if err != nil {
				return err
			}
			entries := cfg.All()
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"files": cfg.Files, "keys": entries})
			}
			w := cmd.OutOrStdout()
			width := 0
			for _, e := range entries {
				width = max(width, len(e.Key))
			}
			for _, e := range entries {
				fmt.Fprintf(w, "%-*s  %-24s  %s\n", width, e.Key, formatValue(e.Value), e.Source)
			}
			return nil
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

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return `""`
		}
		return x
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case map[string]any:
		// One line of JSON: Go's map[k:v] form hides where a value ends.
		if b, err := json.Marshal(x); err == nil {
			return string(b)
		}
	}
	return fmt.Sprintf("%v", v)
}
