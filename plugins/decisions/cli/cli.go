// Package cli is `nexus decision`: init, check, propose, show, list,
// search, format and validate over a Nauro-compatible store. It never
// exits the process: failures are returned as *ExitError.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
	"github.com/nexus-harness/nexus/plugins/decisions/store"
)

// Options configure the command.
type Options struct {
	Stdout, Stderr io.Writer
	// Dir is the working directory the repo pointer is searched from.
	Dir string
	// Frontmatter is the default form for written decisions (nexus config
	// decisions.frontmatter): "documented" (default) or "reference".
	Frontmatter string
	// Home overrides $NAURO_HOME when set.
	Home string
	// Getenv and Now default to the process environment and clock.
	Getenv func(string) string
	Now    func() time.Time
	// Prepare, when set, runs before any subcommand and may fill in options
	// that depend on flags parsed by an enclosing command (nexus loads its
	// layered configuration only after parsing --project).
	Prepare func(*Options) error
}

// ExitError carries the process exit code for a failed command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

func fail(code int, format string, a ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, a...)}
}

type runner struct {
	opt Options
}

// NewCommand returns the `decision` command tree.
func NewCommand(opts Options) *cobra.Command {
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dir == "" {
		opts.Dir, _ = os.Getwd()
	}
	r := &runner{opt: opts}
	root := &cobra.Command{
		Use:   "decision",
		Short: "Record and check architectural decisions (Nauro-compatible store)",
		Long: `Record and check architectural decisions in a Nauro-compatible store: the same store, files
and checks as the decision tools nexus serves over MCP (check_decision, propose_decision, ...).

  nexus decision init                  create the project's store (in $NAURO_HOME, pointed to
                                       by .nauro/config.json, which is meant to be committed)
  nexus decision check "APPROACH"      the recorded decisions related to an approach
  nexus decision propose --title T --rationale R   record one

The store is found from .nauro/config.json above the working directory (or --store DIR);
nexus's own flags --project DIR and --core DIR go before or after the command.

Exit status: 0 done, 1 failed (a proposal rejected, a decision not found), 2 called wrongly
(an unknown command or flag, a flag outside its values), 3 nexus's configuration cannot be
read or parsed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if opts.Prepare != nil {
		root.PersistentPreRunE = func(*cobra.Command, []string) error { return r.opt.Prepare(&r.opt) }
	}
	root.SetOut(opts.Stdout)
	root.SetErr(opts.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &ExitError{Code: 2, Err: err} })
	root.AddCommand(r.initCmd(), r.checkCmd(), r.proposeCmd(), r.showCmd(), r.listCmd(), r.searchCmd(), r.formatCmd(), r.validateCmd(), r.exportCmd())
	return root
}

func args(n int, use string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return &ExitError{Code: 2, Err: fmt.Errorf("usage: %s", use)}
		}
		return nil
	}
}

func (r *runner) mode(flag string) (decision.Frontmatter, error) {
	v := flag
	if v == "" {
		v = r.opt.Frontmatter
	}
	m, err := decision.ParseFrontmatter(v)
	if err != nil {
		return "", &ExitError{Code: 2, Err: err}
	}
	return m, nil
}

func (r *runner) home() (string, error) {
	if r.opt.Home != "" {
		return r.opt.Home, nil
	}
	return store.Home(r.opt.Getenv)
}

// open resolves --store, else the repo pointer (or registry) from Dir.
func (r *runner) open(storeDir string) (*store.FS, error) {
	home, err := r.home()
	if err != nil {
		return nil, &ExitError{Code: 1, Err: err}
	}
	if storeDir != "" && !filepath.IsAbs(storeDir) {
		storeDir = filepath.Join(r.opt.Dir, storeDir)
	}
	res, err := store.Resolve(store.Location{Home: home, Cwd: r.opt.Dir, StoreDir: storeDir})
	if err != nil {
		if errors.Is(err, store.ErrNoProject) {
			return nil, fail(1, "no decision store found from %s: run `nexus decision init` here, or pass --store DIR (%v)", r.opt.Dir, err)
		}
		return nil, &ExitError{Code: 1, Err: err}
	}
	return res.Store, nil
}

func (r *runner) printf(format string, a ...any) { fmt.Fprintf(r.opt.Stdout, format, a...) }

// warnProblems reports, on stderr, every decision file the command had to
// leave out (never silently).
func (r *runner) warnProblems(c *kernel.Corpus) {
	for _, p := range c.Problems {
		fmt.Fprintf(r.opt.Stderr, "nexus: warning: %s was left out: %s\n", p.File, p.Reason)
	}
}

// corpus opens the store (see open) and loads its decisions, reporting every
// file it had to leave out.
func (r *runner) corpus(storeDir string) (*kernel.Corpus, error) {
	fs, err := r.open(storeDir)
	if err != nil {
		return nil, err
	}
	c, err := kernel.Decisions(fs)
	if err != nil {
		return nil, &ExitError{Code: 1, Err: err}
	}
	r.warnProblems(c)
	return c, nil
}

func jsonText(v any) string { return pyjson.Dumps(v, pyjson.Options{Indent: 2}) + "\n" }

func (r *runner) initCmd() *cobra.Command {
	var storeDir, frontmatter string
	c := &cobra.Command{
		Use:   "init [NAME]",
		Short: "Create a project store (registered in $NAURO_HOME, pointed to by .nauro/config.json) or scaffold --store DIR",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			mode, err := r.mode(frontmatter)
			if err != nil {
				return err
			}
			name := filepath.Base(r.opt.Dir)
			if len(a) == 1 {
				name = a[0]
			}
			now := r.opt.Now()
			if storeDir != "" {
				if !filepath.IsAbs(storeDir) {
					storeDir = filepath.Join(r.opt.Dir, storeDir)
				}
				if err := store.Scaffold(storeDir, name, now, mode); err != nil {
					return &ExitError{Code: 1, Err: err}
				}
				r.printf("Initialised decision store %s\n", storeDir)
				return nil
			}
			if rc, err := store.FindRepoConfig(r.opt.Dir); err == nil {
				return fail(1, "%s already points at project %q (%s)", rc.Path, rc.Name, rc.ID)
			}
			home, err := r.home()
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			reg, err := store.LoadRegistry(home)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			proj, err := reg.Register(name, r.opt.Dir, now)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			dir, err := reg.StorePath(proj.ID)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if err := store.Scaffold(dir, proj.Name, now, mode); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if err := reg.Save(); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if err := store.WriteRepoConfig(r.opt.Dir, &store.RepoConfig{Mode: store.ModeLocal, ID: proj.ID, Name: proj.Name}); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			r.printf("Initialised project %q (%s)\nStore: %s\nPointer: %s\n", proj.Name, proj.ID, dir,
				filepath.Join(r.opt.Dir, store.RepoConfigDir, store.RepoConfigFile))
			return nil
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "scaffold this folder instead of registering a project")
	c.Flags().StringVar(&frontmatter, "frontmatter", "", "frontmatter form of the seed decision: documented or reference")
	return c
}

func (r *runner) checkCmd() *cobra.Command {
	var storeDir, context string
	var asJSON bool
	c := &cobra.Command{
		Use:   `check "APPROACH"`,
		Short: "List the recorded decisions related to an approach (BM25, nothing is written)",
		Args:  args(1, `nexus decision check [--store DIR] [--context TEXT] [--json] "APPROACH"`),
		RunE: func(cmd *cobra.Command, a []string) error {
			corpus, err := r.corpus(storeDir)
			if err != nil {
				return err
			}
			res, err := kernel.Check(corpus, a[0], context)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if res.Error != nil {
				return &ExitError{Code: 1, Err: errors.New(res.Error.Reason)}
			}
			if !asJSON {
				r.printf("%s\n", cliText(kernel.RenderCheck(res)))
				return nil
			}
			rel := make([]any, len(res.Related))
			for i, h := range res.Related {
				rel[i] = pyjson.NewObject().Set("id", h.ID).Set("title", h.Title).Set("score", h.Score).
					Set("raw_score", float64(h.Raw)).Set("status", h.Status).Set("date", h.Date).Set("rationale_preview", h.RationalePreview)
			}
			r.printf("%s", jsonText(pyjson.NewObject().Set("related_decisions", rel).Set("assessment", res.Assessment)))
			return nil
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "project store folder (default: found from .nauro/config.json above the working directory)")
	c.Flags().StringVar(&context, "context", "", "why the approach is being considered")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (r *runner) proposeCmd() *cobra.Command {
	var storeDir, title, rationale, operation, affected, confidence, dtype, reversibility, frontmatter string
	var rejected, files, resolves []string
	var asJSON bool
	c := &cobra.Command{
		Use:   "propose",
		Short: "Record a decision (add, supersede or update) after the same checks the MCP tool runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			// A flag outside its values is a usage error, whatever else is
			// wrong.
			for _, e := range []struct {
				flag, val string
				allowed   []string
			}{
				{"operation", operation, []string{kernel.OpAdd, kernel.OpUpdate, kernel.OpSupersede}},
				{"confidence", confidence, decision.Confidences},
				{"type", dtype, decision.DecisionTypes},
				{"reversibility", reversibility, decision.Reversibility},
			} {
				if err := checkEnum(e.flag, e.val, e.allowed); err != nil {
					return err
				}
			}
			mode, err := r.mode(frontmatter)
			if err != nil {
				return err
			}
			fs, err := r.open(storeDir)
			if err != nil {
				return err
			}
			req := kernel.ProposeRequest{Title: title, Rationale: rationale, Operation: operation, AffectedDecisionID: affected, ResolvesQuestions: resolves}
			if operation != kernel.OpUpdate {
				if confidence == "" {
					confidence = "medium"
				}
			}
			if confidence != "" {
				req.Confidence = &confidence
			}
			if dtype != "" {
				req.DecisionType = &dtype
			}
			if reversibility != "" {
				req.Reversibility = &reversibility
			}
			manual := "manual"
			req.Source = &manual
			if len(files) > 0 {
				req.FilesAffected = files
			}
			if len(rejected) > 0 {
				items := make([]any, len(rejected))
				for i, s := range rejected {
					alt, reason, _ := strings.Cut(s, ":")
					items[i] = map[string]any{"alternative": strings.TrimSpace(alt), "reason": strings.TrimSpace(reason)}
				}
				req.Rejected = items
			}
			if (operation == kernel.OpUpdate || operation == kernel.OpSupersede) && affected != "" {
				stems, err := fs.ListDecisions()
				if err != nil {
					return &ExitError{Code: 1, Err: err}
				}
				n, ok := decision.NumberOf(affected)
				stem := ""
				if ok {
					stem, _ = kernel.FindStem(stems, n)
				}
				if stem == "" {
					return fail(1, "affected decision %q not found in the store", affected)
				}
				req.AffectedDecisionID = stem
			} else if operation == kernel.OpUpdate || operation == kernel.OpSupersede {
				return fail(2, "--operation %s needs --affected ID", operation)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			lock, err := fs.DecisionWriteLock(ctx)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			res, err := kernel.Propose(ctx, fs, req, kernel.ProposeOptions{Now: r.opt.Now(), Frontmatter: mode})
			lock.Release()
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if res.Status == "confirmed" {
				if _, err := fs.Capture(ctx, "decision: "+res.DecisionID, "", r.opt.Now()); err != nil {
					fmt.Fprintf(r.opt.Stderr, "warning: snapshot not taken: %v\n", err)
				}
			}
			if asJSON {
				r.printf("%s", jsonText(res.Envelope()))
			} else if res.Status == "confirmed" {
				r.printf("Recorded %s (%s)\n%s\n", res.DecisionID, res.Operation, cliText(res.Assessment))
				for _, s := range res.Similar {
					r.printf("  - %s  %s  (BM25 %.2f)\n", decision.Label(s.Num), s.Title, s.Score)
				}
			}
			if res.Status != "confirmed" {
				return &ExitError{Code: 1, Err: fmt.Errorf("proposal rejected (tier %d): %s", res.Tier, cliText(res.Assessment))}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&storeDir, "store", "", "project store folder")
	f.StringVar(&title, "title", "", "decision title (empty for --operation update)")
	f.StringVar(&rationale, "rationale", "", "why (at least 20 characters)")
	f.StringVar(&operation, "operation", kernel.OpAdd, "add, update or supersede")
	f.StringVar(&affected, "affected", "", "decision to update or supersede (e.g. decision-042)")
	f.StringArrayVar(&rejected, "rejected", nil, "a rejected alternative as 'NAME: reason' (repeatable)")
	f.StringVar(&confidence, "confidence", "", "high, medium (default) or low")
	f.StringVar(&dtype, "type", "", "decision type (architecture, api_design, infrastructure, pattern, refactor, data_model)")
	f.StringVar(&reversibility, "reversibility", "", "easy, moderate or hard")
	f.StringArrayVar(&files, "file", nil, "affected file (repeatable)")
	f.StringArrayVar(&resolves, "resolves", nil, "open question id this decision answers (repeatable)")
	f.StringVar(&frontmatter, "frontmatter", "", "documented or reference (default: nexus config decisions.frontmatter)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

func (r *runner) showCmd() *cobra.Command {
	var storeDir string
	var header bool
	c := &cobra.Command{
		Use:   "show NUMBER",
		Short: "Print a decision",
		Args:  args(1, "nexus decision show [--store DIR] [--header] NUMBER"),
		RunE: func(cmd *cobra.Command, a []string) error {
			num, ok := decision.NumberOf(a[0])
			if !ok {
				if n, err := strconv.Atoi(a[0]); err == nil {
					num, ok = n, true
				}
			}
			if !ok {
				return fail(2, "%q is not a decision number", a[0])
			}
			fs, err := r.open(storeDir)
			if err != nil {
				return err
			}
			mode := "full"
			if header {
				mode = "header"
			}
			text, err := kernel.GetDecision(fs, num, mode)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if strings.HasPrefix(text, "Error: ") {
				return &ExitError{Code: 1, Err: errors.New(strings.TrimPrefix(text, "Error: "))}
			}
			r.printf("%s\n", text)
			return nil
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "project store folder")
	c.Flags().BoolVar(&header, "header", false, "print the triage header only")
	return c
}

func (r *runner) listCmd() *cobra.Command {
	var storeDir string
	var all, asJSON bool
	var limit int
	c := &cobra.Command{
		Use:   "list",
		Short: "List decisions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			corpus, err := r.corpus(storeDir)
			if err != nil {
				return err
			}
			rows := kernel.ListDecisions(corpus, limit, all)
			if asJSON {
				items := make([]any, len(rows))
				for i, row := range rows {
					items[i] = row
				}
				r.printf("%s", jsonText(items))
				return nil
			}
			r.printf("%s\n", kernel.RenderList(rows))
			return nil
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "project store folder")
	c.Flags().BoolVar(&all, "all", false, "include superseded decisions")
	c.Flags().IntVar(&limit, "limit", 20, "maximum number of decisions")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (r *runner) searchCmd() *cobra.Command {
	var storeDir string
	var all, asJSON bool
	var limit int
	c := &cobra.Command{
		Use:   `search "QUERY"`,
		Short: "BM25 search over decision titles and rationales",
		Args:  args(1, `nexus decision search [--store DIR] [--all] [--limit N] [--json] "QUERY"`),
		RunE: func(cmd *cobra.Command, a []string) error {
			corpus, err := r.corpus(storeDir)
			if err != nil {
				return err
			}
			hits, errp, err := kernel.Search(corpus, a[0], limit, all)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if errp != nil {
				return &ExitError{Code: 1, Err: errors.New(cliText(errp.Reason))}
			}
			if asJSON {
				items := make([]any, len(hits))
				for i, h := range hits {
					items[i] = h.JSON()
				}
				r.printf("%s", jsonText(items))
				return nil
			}
			r.printf("%s\n", kernel.RenderSearchFor(a[0], hits))
			return nil
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "project store folder")
	c.Flags().BoolVar(&all, "all", false, "include superseded decisions")
	c.Flags().IntVar(&limit, "limit", 10, "maximum number of results")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (r *runner) formatCmd() *cobra.Command {
	var frontmatter string
	c := &cobra.Command{
		Use:   "format FILE",
		Short: "Print a decision file in canonical form",
		Args:  args(1, "nexus decision format [--frontmatter documented|reference] FILE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			mode, err := r.mode(frontmatter)
			if err != nil {
				return err
			}
			d, err := r.parseFile(a[0])
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			r.printf("%s", decision.Format(d, mode))
			return nil
		},
	}
	c.Flags().StringVar(&frontmatter, "frontmatter", "", "documented (null keys omitted) or reference (all ten keys)")
	return c
}

func (r *runner) parseFile(path string) (*decision.Decision, error) {
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.opt.Dir, p)
	}
	b, err := store.ReadPath(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return decision.Parse(string(b), filepath.Base(p))
}

func (r *runner) validateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check decision files; print each file's first error",
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				//lint:ignore ST1005 the usage line is printed as it stands
				return &ExitError{Code: 2, Err: errors.New("usage: nexus decision validate FILE...")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			bad := 0
			for _, f := range a {
				if _, err := r.parseFile(f); err != nil {
					bad++
					r.printf("%s: %v\n", f, firstLine(err))
					continue
				}
				r.printf("%s: ok\n", f)
			}
			if bad > 0 {
				return fail(1, "%d of %d files are not valid decisions", bad, len(a))
			}
			return nil
		},
	}
}

// firstLine reports a parse failure's first error (validation failures may
// list several).
func firstLine(err error) string {
	var pe *decision.ParseError
	if errors.As(err, &pe) && len(pe.Fields) > 0 {
		f := pe.Fields[0]
		loc := "decision"
		if len(f.Loc) > 0 {
			parts := make([]string, len(f.Loc))
			for i, l := range f.Loc {
				parts[i] = fmt.Sprint(l)
			}
			loc = strings.Join(parts, ".")
		}
		return fmt.Sprintf("%s: %s [%s]", loc, f.Msg, pe.Rule)
	}
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s [%s]", pe.Msg, pe.Rule)
	}
	return err.Error()
}
