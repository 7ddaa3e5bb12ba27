package main

import (
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/shell"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/conformance/nexustarget"
	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

func init() { register(newConformanceCmd) }

type conformanceFlags struct {
	fixtures   []string
	harnessID  string
	junit      string
	target     string
	toolPrefix string
	run        string
}

func newConformanceCmd(a *app) *cobra.Command {
	var fl conformanceFlags
	cmd := &cobra.Command{
		Use:   "conformance [TARGET-ARG...]",
		Short: "Run the nexus-core conformance fixtures against nexus or any MCP harness",
		Long: `Run every conformance fixture of the nexus-core distribution (conformance/tools,
conformance/lifecycle, conformance/scenarios, plus --fixtures DIR) and report one line per case.

Each case runs in a fresh scratch project. After every call all state files present are
checked against their nexus-core state schemas; a violation fails the case even when the
fixture's own assertions pass.

Without --target the harness under test is nexus itself, in-process. With --target, the command
line (--target's value, split like a shell would, followed by any further arguments) is started
as an MCP stdio server once per case, in the scratch project, with NEXUS_RUNTIME_ROOT set to its
.nexus folder and NEXUS_CORE_DIR to the distribution; tools are called as <tool-prefix><tool>. Lifecycle fixtures are then skipped:
events are harness hooks, not MCP tools.

  nexus conformance --core third_party/nexus-core/dist
  nexus conformance --target nexus mcp
  nexus conformance --target "node dist/server.js" --tool-prefix nx_ --junit report.xml

Exit status: 0 when no case failed, 1 when one did, 2 when nexus was called wrongly.`,
		// Arguments extend --target's command line; runConformance refuses them without it.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConformance(cmd, a, fl, args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&fl.fixtures, "fixtures", nil, "extra fixture directory: its *.json files and those of its tools/, lifecycle/, scenarios/ (repeatable)")
	f.StringVar(&fl.harnessID, "harness-id", conformance.DefaultHarnessID, "harness namespace for lifecycle events whose fixture names none")
	f.StringVar(&fl.junit, "junit", "", "also write a JUnit XML report to FILE")
	f.StringVar(&fl.target, "target", "", "run against this MCP stdio server command instead of nexus in-process")
	f.StringVar(&fl.toolPrefix, "tool-prefix", conformance.DefaultToolPrefix, `prefix of the target's tool names ("" for bare names); only with --target`)
	f.StringVar(&fl.run, "run", "", "run only the cases whose test_id matches this regular expression")
	return cmd
}

func runConformance(cmd *cobra.Command, a *app, fl conformanceFlags, args []string) error {
	var command []string
	if fl.target != "" {
		words, err := splitCommand(fl.target)
		if err != nil {
			return usagef("--target: %v", err)
		}
		command = append(words, args...)
		if len(command) == 0 {
			return usagef("--target is empty")
		}
	} else {
		if len(args) > 0 {
			return usagef("unexpected arguments %q (arguments are only taken as the rest of a --target command)", args)
		}
		if cmd.Flags().Changed("tool-prefix") {
			return usagef("--tool-prefix only applies with --target")
		}
	}
	if !harnessid.Valid(fl.harnessID) {
		return usagef("--harness-id %q must match ^[a-z][a-z0-9-]*$ (nexus-core's harness_id pattern)", fl.harnessID)
	}
	var filter *regexp.Regexp
	if fl.run != "" {
		re, err := regexp.Compile(fl.run)
		if err != nil {
			return usagef("--run: %v", err)
		}
		filter = re
	}
	dist, err := a.Dist()
	if err != nil {
		return usageError{err}
	}
	// The version gate first: an unsupported distribution gets its own
	// explanation, not a missing-fixtures error.
	if _, err := vocabulary.OpenManifestDist(dist); err != nil {
		return usageError{err}
	}
	for _, d := range fl.fixtures {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return usagef("--fixtures %s is not a directory", d)
		}
	}

	schemas := schema.NewCoreSetFS(dist.FS)
	sources := conformance.CoreSources(dist.FS, dist.File)
	for _, d := range fl.fixtures {
		sources = append(sources, conformance.DirSources(d)...)
	}
	suite, err := conformance.Load(schemas, sources...)
	if err != nil {
		return err
	}
	cases := suite.Cases
	if filter != nil {
		cases = cases[:0:0]
		for _, c := range suite.Cases {
			if filter.MatchString(c.ID) {
				cases = append(cases, c)
			}
		}
		if len(cases) == 0 {
			return usagef("--run %q matches no test_id", fl.run)
		}
	}

	var factory conformance.Factory
	targetName := "nexus (in-process)"
	if command != nil {
		prefix := fl.toolPrefix
		if prefix == "" {
			prefix = conformance.NoPrefix
		}
		// The server runs in a scratch project where it could not find the
		// distribution on its own; tell it which one the fixtures come from.
		// (NEXUS_CORE_DIR is nexus's variable; other harnesses ignore it.)
		// The built-in copy needs no telling: a nexus server falls back to
		// its own.
		var env []string
		if !dist.IsBuiltin() {
			env = []string{"NEXUS_CORE_DIR=" + dist.Dir}
		}
		factory = &conformance.MCPFactory{Command: command, ToolPrefix: prefix, Env: env}
		targetName = strings.Join(command, " ")
	} else {
		nf, err := nexustarget.NewDist(dist, schemas)
		if err != nil {
			return err
		}
		factory = nf
	}
	runner, err := conformance.NewRunner(conformance.Options{
		Factory:   factory,
		Schemas:   schemas,
		HarnessID: fl.harnessID,
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	w := cmd.OutOrStdout()
	if !a.jsonOut {
		for _, n := range suite.Notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
	start := time.Now()
	results := runner.Run(ctx, cases, func(r *conformance.Result) {
		if !a.jsonOut {
			conformance.WriteText(w, r)
		}
	})
	elapsed := time.Since(start)
	summary := conformance.Summarise(results)
	if a.jsonOut {
		if err := writeJSON(w, conformance.NewReport(targetName, fl.harnessID, dist.Where(), suite.Notes, results, elapsed)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, summary.String())
	}
	if fl.junit != "" {
		if err := writeJUnitFile(fl.junit, results, elapsed); err != nil {
			return err
		}
	}
	if summary.Failed > 0 {
		return &exitError{Code: 1, Silent: true}
	}
	return nil
}

func writeJUnitFile(path string, results []*conformance.Result, elapsed time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := conformance.WriteJUnit(f, results, elapsed); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// splitCommand splits --target's command line into words the way a shell
// would: quotes, backslashes, $VAR from the environment, ~ and braces.
// Operators (|, ;, &&, redirections) and command substitutions are
// errors: the line is one command, started without a shell.
func splitCommand(s string) ([]string, error) {
	return shell.Fields(s, nil)
}
