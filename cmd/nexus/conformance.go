package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
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

type conformanceFlags struct {
	verbose      bool
	fixtures     []string
	harnessID    string
	junit        string
	targets      []string
	hookTargets  []string
	hookProtocol string
	toolPrefix   string
	run          string
}

func newConformanceCmd(a *app) *cobra.Command {
	var fl conformanceFlags
	cmd := &cobra.Command{
		Use:   "conformance [TARGET-ARG...]",
		Short: "Run the nexus-core conformance fixtures against nexus or any harness (MCP server, hook command)",
		Long: `Run every conformance fixture of the nexus-core distribution (conformance/tools,
conformance/lifecycle, conformance/scenarios, plus --fixtures DIR) and report one line per case.

Each case runs in a fresh scratch project. After every call all state files present are
checked against their nexus-core state schemas; a violation fails the case even when the
fixture's own assertions pass.

Without --target the harness under test is nexus itself, in-process. With --target, the command
line (--target's value, split like a shell would, followed by any further arguments) is started
as an MCP stdio server once per case, in the scratch project, with NEXUS_RUNTIME_ROOT set to its
.nexus folder (and NEXUS_CORE_DIR to the distribution when it is a directory); tools are called
as <tool-prefix><tool>. A result that is the error envelope {"error": "..."}, an isError result
and a JSON-RPC error all count as an error; only the message is compared.

Lifecycle fixtures are harness hooks, not MCP tools: --hook-target CMD runs them through the
harness's hook command, each event sent as the payloads its host sends (--hook-protocol claude:
Claude Code's SubagentStart/PostToolUse/SubagentStop, as nexus's own adapter reads them;
neutral: nexus's neutral events), in the scratch project; the state postconditions are then
checked as for any target. Without --hook-target they are skipped over MCP.

Repeat --target (each with its own --hook-target, in the same order) to compare harnesses: one
table of cases × harnesses with each verdict and the first reason, then a summary per harness.
A target that does not start is one error, not a failure per case.

  nexus conformance
  nexus conformance --target "nexus mcp" --hook-target "nexus hook --host claude"
  nexus conformance --target "node dist/server.js" --tool-prefix nx_ --junit report.xml
  nexus conformance --target "nexus mcp" --hook-target "nexus hook --host claude" \
                    --target "node peer/mcp-server.cjs" --hook-target "node peer/gate.cjs"

Exit status: 0 when no case failed, 1 when one did or a target did not start, 2 when nexus was
called wrongly or no distribution was found, 3 when a configuration file cannot be read or
parsed.`,
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
	f.BoolVarP(&fl.verbose, "verbose", "v", false, "also show the notes about known upstream deviations of nexus-core, which the summary counts")
	f.StringArrayVar(&fl.targets, "target", nil, "run against this MCP stdio server command instead of nexus in-process (repeat to compare harnesses)")
	f.StringArrayVar(&fl.hookTargets, "hook-target", nil, "run the lifecycle fixtures through this hook command (one per --target, in order)")
	f.StringVar(&fl.hookProtocol, "hook-protocol", conformance.HookClaude, "payloads --hook-target reads: claude or neutral")
	f.StringVar(&fl.toolPrefix, "tool-prefix", conformance.DefaultToolPrefix, `prefix of the target's tool names ("" for bare names); only with --target`)
	f.StringVar(&fl.run, "run", "", "run only the cases whose test_id matches this regular expression")
	return cmd
}

// harnessSpec is one harness under test: its MCP command (nil = nexus
// in-process) and its hook command (nil = none).
type harnessSpec struct {
	tools, hooks []string
}

// harnessSpecs pairs the --target and --hook-target commands.
func harnessSpecs(cmd *cobra.Command, fl conformanceFlags, args []string) ([]harnessSpec, error) {
	split := func(flag, s string) ([]string, error) {
		words, err := splitCommand(s)
		if err != nil {
			return nil, usagef("%s: %v", flag, err)
		}
		if len(words) == 0 {
			return nil, usagef("%s is empty", flag)
		}
		return words, nil
	}
	switch {
	case len(args) > 0 && len(fl.targets) != 1:
		if len(fl.targets) == 0 {
			return nil, usagef("unexpected arguments %q (arguments are only taken as the rest of a --target command)", args)
		}
		return nil, usagef("unexpected arguments %q: with several --target, quote each command whole", args)
	case len(fl.targets) == 0 && cmd.Flags().Changed("tool-prefix"):
		return nil, usagef("--tool-prefix only applies with --target")
	case len(fl.hookTargets) > 0 && len(fl.targets) > 0 && len(fl.hookTargets) != len(fl.targets):
		return nil, usagef("%d --hook-target for %d --target: give one hook command per target, in the same order", len(fl.hookTargets), len(fl.targets))
	case cmd.Flags().Changed("hook-protocol") && len(fl.hookTargets) == 0:
		return nil, usagef("--hook-protocol only applies with --hook-target")
	case fl.hookProtocol != conformance.HookClaude && fl.hookProtocol != conformance.HookNeutral:
		return nil, usagef("--hook-protocol %q: use claude or neutral", fl.hookProtocol)
	}
	n := max(len(fl.targets), len(fl.hookTargets), 1)
	specs := make([]harnessSpec, n)
	for i := range specs {
		if i < len(fl.targets) {
			words, err := split("--target", fl.targets[i])
			if err != nil {
				return nil, err
			}
			specs[i].tools = append(words, args...)
		}
		if i < len(fl.hookTargets) {
			words, err := split("--hook-target", fl.hookTargets[i])
			if err != nil {
				return nil, err
			}
			specs[i].hooks = words
		}
	}
	return specs, nil
}

func runConformance(cmd *cobra.Command, a *app, fl conformanceFlags, args []string) error {
	specs, err := harnessSpecs(cmd, fl, args)
	if err != nil {
		return err
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

	// A harness started in a scratch project could not find the
	// distribution on its own; tell it which one the fixtures come from.
	// (NEXUS_CORE_DIR is nexus's variable; other harnesses ignore it.) The
	// built-in copy needs no telling: nexus falls back to its own.
	var env []string
	if !dist.IsBuiltin() {
		env = []string{"NEXUS_CORE_DIR=" + dist.Dir}
	}
	prefix := fl.toolPrefix
	if prefix == "" {
		prefix = conformance.NoPrefix
	}
	runs := make([]*conformance.Run, len(specs))
	factories := make([]conformance.Factory, len(specs))
	for i, sp := range specs {
		run := &conformance.Run{}
		if len(specs) > 1 {
			run.Label = string(rune('A' + i%26))
			if i >= 26 {
				run.Label += strconv.Itoa(i / 26)
			}
		}
		var tools, hooks conformance.Factory
		if sp.tools != nil {
			tools = &conformance.MCPFactory{Command: sp.tools, ToolPrefix: prefix, Env: env}
			run.Target = strings.Join(sp.tools, " ")
		}
		if sp.hooks != nil {
			hooks = &conformance.HookFactory{Command: sp.hooks, Protocol: fl.hookProtocol, Env: env}
			run.HookTarget = strings.Join(sp.hooks, " ") + " (" + fl.hookProtocol + ")"
		}
		switch {
		case tools != nil && hooks != nil:
			factories[i] = &conformance.Combined{Tools: tools, Events: hooks}
		case tools != nil:
			factories[i] = tools
		case hooks != nil:
			factories[i] = hooks
		default:
			nf, err := nexustarget.NewDist(dist, schemas)
			if err != nil {
				return err
			}
			factories[i] = nf
		}
		runs[i] = run
	}

	// main's signal handler cancels the run (an interrupt stops it between
	// cases and reports what ran).
	ctx := cmd.Context()
	w := cmd.OutOrStdout()
	single := len(runs) == 1
	if !a.jsonOut {
		for _, n := range suite.Notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
	failed := false
	for i, run := range runs {
		runner, err := conformance.NewRunner(conformance.Options{Factory: factories[i], Schemas: schemas, HarnessID: fl.harnessID})
		if err != nil {
			return err
		}
		// A target that does not start at all is one error, not the same
		// failure once per case.
		if err := runner.Check(ctx); err != nil {
			if single {
				return fmt.Errorf("the target did not start, so no case ran: %w", err)
			}
			run.StartErr, failed = err, true
			continue
		}
		start := time.Now()
		run.Results = runner.Run(ctx, cases, func(r *conformance.Result) {
			if single && !a.jsonOut {
				conformance.WriteResult(w, r, fl.verbose)
			}
		})
		run.Elapsed = time.Since(start)
		if conformance.Summarise(run.Results).Failed > 0 {
			failed = true
		}
	}
	switch {
	case a.jsonOut && single:
		r := runs[0]
		if err := writeJSON(w, report(r, fl.harnessID, dist.Where(), suite.Notes)); err != nil {
			return err
		}
	case a.jsonOut:
		doc := struct {
			Harnesses []*conformance.Report `json:"harnesses"`
		}{}
		for _, r := range runs {
			doc.Harnesses = append(doc.Harnesses, report(r, fl.harnessID, dist.Where(), suite.Notes))
		}
		if err := writeJSON(w, doc); err != nil {
			return err
		}
	case single:
		// The notes about nexus-core's own known deviations are not
		// problems of the run: one line says so (-v shows them), above the
		// summary.
		if n, ids := conformance.UpstreamNotes(runs[0].Results); n > 0 && !fl.verbose {
			fmt.Fprintf(w, "note: %d notes about known upstream deviations of nexus-core itself were tolerated, not failures (%s; see docs/conformance.md; -v shows them)\n", n, strings.Join(ids, ", "))
		}
		fmt.Fprintln(w, conformance.Summarise(runs[0].Results).String())
	default:
		conformance.WriteComparison(w, runs)
	}
	if fl.junit != "" {
		if err := writeJUnitFile(fl.junit, runs); err != nil {
			return err
		}
	}
	if failed {
		return &exitError{Code: 1, Silent: true}
	}
	return nil
}

// report is the --json document of one harness's run.
func report(r *conformance.Run, harnessID, core string, notes []string) *conformance.Report {
	target := r.Target
	if target == "" && r.HookTarget == "" {
		target = "nexus (in-process)"
	}
	rep := conformance.NewReport(target, harnessID, core, notes, r.Results, r.Elapsed)
	if rep.Cases == nil {
		rep.Cases = []*conformance.Result{}
	}
	rep.Label, rep.HookTarget = r.Label, r.HookTarget
	if r.StartErr != nil {
		rep.StartError = r.StartErr.Error()
	}
	return rep
}

func writeJUnitFile(path string, runs []*conformance.Run) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := conformance.WriteJUnitRuns(f, runs); err != nil {
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
