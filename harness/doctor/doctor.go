// Package doctor diagnoses one project's nexus setup: the nexus-core
// distribution, configuration, state files, leftover sessions, co-running
// harnesses, locks and temporary files, plugins, and each host's
// integration (the checks a host package supplies: HostChecker). Each check reports findings that say what is wrong and how
// to fix it; a finding whose fix is safe to apply without asking (moving a
// corrupt file aside, removing a dead writer's temporary file, re-running
// the installer for nexus's own entries) carries that fix, and Run applies
// it only when asked to.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/harness/install"
)

// Status grades a finding.
type Status string

// Statuses, from good to bad.
const (
	StatusOK    Status = "ok"
	StatusWarn  Status = "warn"
	StatusError Status = "error"
)

// Finding is one thing a check found.
type Finding struct {
	Status  Status `json:"status"`
	Message string `json:"message"`
	// Fix says how to fix the problem (empty for ok findings).
	Fix string `json:"fix,omitempty"`
	// Fixable is true when `nexus doctor --fix` applies the fix itself.
	Fixable bool `json:"fixable,omitempty"`

	repair func(ctx context.Context) (did string, err error)
}

// Check is one diagnosis.
type Check interface {
	// Name is a short stable identifier ("state", "locks", ...).
	Name() string
	// Run inspects without changing anything; repairs travel inside the
	// findings and run only through Run(..., fix=true).
	Run(ctx context.Context) []Finding
}

// OK is a finding that all is well.
func OK(format string, args ...any) Finding {
	return Finding{Status: StatusOK, Message: fmt.Sprintf(format, args...)}
}

// Warn is a problem that does not stop nexus, with how to fix it.
func Warn(msg, fix string) Finding { return Finding{Status: StatusWarn, Message: msg, Fix: fix} }

// Fault is an error, with how to fix it.
func Fault(msg, fix string) Finding { return Finding{Status: StatusError, Message: msg, Fix: fix} }

func ok(format string, args ...any) Finding { return OK(format, args...) }
func warn(msg, fix string) Finding          { return Warn(msg, fix) }
func fault(msg, fix string) Finding         { return Fault(msg, fix) }

// RepairedBy marks a finding as fixable by fn (`nexus doctor --fix`).
func (f Finding) RepairedBy(fn func(context.Context) (string, error)) Finding {
	f.Fixable = true
	f.repair = fn
	return f
}

func (f Finding) repairedBy(fn func(context.Context) (string, error)) Finding {
	return f.RepairedBy(fn)
}

// AllOK reports whether every finding is ok.
func AllOK(fs []Finding) bool {
	for _, f := range fs {
		if f.Status != StatusOK {
			return false
		}
	}
	return true
}

// Once makes a repair shared by several findings run a single time; the
// first caller gets its outcome, later ones nothing to report.
func Once(fn func(context.Context) (string, error)) func(context.Context) (string, error) {
	var mu sync.Mutex
	done := false
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return "", nil
		}
		done = true
		return fn(ctx)
	}
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Check    string        `json:"check"`
	Findings []Finding     `json:"findings"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Action is one repair `--fix` carried out (or tried).
type Action struct {
	Check string `json:"check"`
	Did   string `json:"did,omitempty"`
	Error string `json:"error,omitempty"`
}

// Report is the outcome of Run. With fix, Checks describe the project after
// the repairs.
type Report struct {
	Healthy  bool          `json:"healthy"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Fixable  int           `json:"fixable"`
	Checks   []CheckResult `json:"checks"`
	Fixed    []Action      `json:"fixed"`
}

// Run runs every check (concurrently: they read different things, and two
// of them wait on subprocesses). With fix, the repairs of the problems
// found are applied one after the other, in check order, and the checks
// run again so the report shows what is left.
func Run(ctx context.Context, checks []Check, fix bool) *Report {
	results := runAll(ctx, checks)
	actions := []Action{}
	if fix {
		for _, r := range results {
			for _, f := range r.Findings {
				if f.repair == nil || f.Status == StatusOK {
					continue
				}
				did, err := f.repair(ctx)
				if did == "" && err == nil {
					continue
				}
				a := Action{Check: r.Check, Did: did}
				if err != nil {
					a.Error = err.Error()
				}
				actions = append(actions, a)
			}
		}
		if len(actions) > 0 {
			results = runAll(ctx, checks)
		}
	}
	rep := &Report{Checks: results, Fixed: actions}
	for _, r := range results {
		for _, f := range r.Findings {
			switch f.Status {
			case StatusError:
				rep.Errors++
			case StatusWarn:
				rep.Warnings++
			}
			if f.Fixable && f.Status != StatusOK {
				rep.Fixable++
			}
		}
	}
	rep.Healthy = rep.Errors == 0
	return rep
}

func runAll(ctx context.Context, checks []Check) []CheckResult {
	results := make([]CheckResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			start := time.Now()
			fs := runOne(ctx, c)
			results[i] = CheckResult{Check: c.Name(), Findings: fs, Elapsed: time.Since(start)}
		})
	}
	wg.Wait()
	return results
}

// runOne turns a panicking check into an error finding: one broken check
// must not hide the others' results.
func runOne(ctx context.Context, c Check) (fs []Finding) {
	defer func() {
		if p := recover(); p != nil {
			fs = []Finding{fault(fmt.Sprintf("the %s check failed inside nexus: %v", c.Name(), p),
				"report this as a nexus bug; the other checks are unaffected")}
		}
	}()
	fs = c.Run(ctx)
	if len(fs) == 0 {
		fs = []Finding{ok("nothing to check")}
	}
	return fs
}

// WriteText prints one line per finding ("status  check  message", with
// the fix indented below problems), what --fix did, and a verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Check))
	}
	pad := strings.Repeat(" ", 2+5+2+width+2)
	for _, c := range r.Checks {
		for _, f := range c.Findings {
			fmt.Fprintf(&b, "  %-5s  %-*s  %s\n", f.Status, width, c.Check, indent(f.Message, pad))
			if f.Status != StatusOK && f.Fix != "" {
				label := "fix: "
				if f.Fixable {
					label = "fix (--fix does this): "
				}
				fmt.Fprintf(&b, "%s%s\n", pad, indent(label+f.Fix, pad))
			}
		}
	}
	for _, a := range r.Fixed {
		if a.Error != "" {
			fmt.Fprintf(&b, "fix failed: %s: %s\n", a.Check, a.Error)
		} else {
			fmt.Fprintf(&b, "fixed: %s: %s\n", a.Check, a.Did)
		}
	}
	b.WriteString(r.Verdict())
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict is the one-line summary.
func (r *Report) Verdict() string {
	// The findings are the lines above it (a check may print several: one
	// per MCP server, say), so they are what is counted.
	n := 0
	for _, c := range r.Checks {
		n += len(c.Findings)
	}
	switch {
	case r.Errors == 0 && r.Warnings == 0:
		return fmt.Sprintf("healthy: all %s ok (%s)", plural(n, "finding"), plural(len(r.Checks), "check"))
	case r.Errors == 0:
		return fmt.Sprintf("healthy, with %s (%s of %s)", plural(r.Warnings, "warning"), plural(n, "finding"), plural(len(r.Checks), "check"))
	}
	s := fmt.Sprintf("not healthy: %s, %s", plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	if r.Fixable > 0 {
		s += fmt.Sprintf("; `nexus doctor --fix` can fix %d of them", r.Fixable)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// indent continues a multi-line message under its first line.
func indent(s, pad string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// age renders a duration for humans ("3h", "2d").
func age(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// HostChecker is a host whose setup the doctor can check: what its
// package supplies to `nexus doctor` (harness/host/<host>).
type HostChecker interface {
	DoctorChecks(env HostEnv) []Check
}

// HostEnv is what a host's checks know of this nexus and project.
type HostEnv struct {
	// Project and Home are the project root and the user's home folder.
	Project, Home string
	// Executable is this nexus (absolute, symlinks resolved); "" when it
	// cannot be told.
	Executable string
	// Version is this nexus's version.
	Version string
	// CoreDir is the distribution's folder ("" = the built-in one); NoCore
	// is set when none could be located.
	CoreDir string
	NoCore  bool
	// ChosenCore is the distribution chosen by flag or NEXUS_CORE_DIR, as
	// install records it, for repairs of commands that name none.
	ChosenCore string
	// Install is what `nexus install <host>` would be asked, for the
	// checks that compare with it and the repairs that re-run it (its
	// Catalog is nil when the distribution cannot be loaded).
	Install install.Request
}
