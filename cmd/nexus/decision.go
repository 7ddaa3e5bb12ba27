package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// `nexus decision` runs the decision store's command line in the plugin
// host program (`nexus-plugins decision`), which links the store: nexus
// itself does not, so that every hook process starts about 0.2 ms faster
// and nexus is 0.57 MB smaller, for one more process start (about 5 ms of
// CPU) per decision command (docs/performance.md). nexus passes what its
// configuration says; the arguments go through unparsed, so the store's own
// command line answers --help and reports its usage errors.
func newDecisionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "decision",
		Short: "Record and check architectural decisions (Nauro-compatible store)",
		Long: `Record and check architectural decisions in a Nauro-compatible store: init, check,
propose, show, list, search, format, validate, export. ` + "`nexus decision --help`" + ` lists them with their flags.
The store's command line runs in the plugin host program, nexus-plugins, installed beside nexus.`,
		Args:               cobra.ArbitraryArgs, // the store's command line checks them
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDecision(a, cmd, args)
		},
	}
}

func runDecision(a *app, cmd *cobra.Command, args []string) error {
	args, err := takeRootFlags(a, args)
	if err != nil {
		return usageError{err}
	}
	proj, err := a.Project()
	if err != nil {
		return err
	}
	dir := ""
	if a.projectFlag != "" {
		dir = proj
	}
	c, err := pluginhost.HostCommand(append(decisionHostArgs(a, dir), args...)...)
	if err != nil {
		return fmt.Errorf("nexus decision runs in the plugin host: %w", err)
	}
	c.Stdout, c.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.Exited():
		return &exitError{Code: ee.ExitCode(), Silent: true} // it said why
	default:
		return fmt.Errorf("nexus decision: the plugin host %s: %w", c.Path, err)
	}
}

// decisionHostArgs are the plugin host's arguments for the store's
// command line, up to and including "--": what nexus's configuration says
// (a configuration that does not load is reported by the subcommand; its
// --help still works), and the folder to find the store from ("" = the
// working directory).
func decisionHostArgs(a *app, dir string) []string {
	host := []string{"decision"}
	if cfg, err := a.Config(); err != nil {
		// Reported by the subcommand (exit 3 for a configuration file
		// that does not load); --help still works.
		msg := err.Error()
		if isConfigError(err) {
			msg = strings.TrimPrefix(configErrorText(err), "nexus: ")
		}
		host = append(host, "--config-error", msg)
	} else {
		host = append(host, "--frontmatter", cfg.String("decisions.frontmatter"), "--nauro-home", cfg.String("decisions.nauro_home"))
	}
	if dir != "" {
		host = append(host, "--dir", dir)
	}
	return append(host, "--")
}

// takeRootFlags takes nexus's own flags (--project, --core) out of the
// arguments cobra left unparsed, wherever they stand before "--", and sets
// them as cobra would have.
func takeRootFlags(a *app, args []string) ([]string, error) {
	pf := a.root.PersistentFlags()
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(rest, args[i:]...), nil
		}
		name, val, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(arg, "--") || (name != "project" && name != "core") {
			rest = append(rest, arg)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: --%s", name)
			}
			i++
			val = args[i]
		}
		if err := pf.Set(name, val); err != nil {
			return nil, err
		}
	}
	return rest, nil
}
