package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/conformance/assertion"
)

// Status is a case's verdict.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Failure is one reason a case failed.
type Failure struct {
	// Step is the 1-based step of a steps fixture (0 = not in a step).
	Step            int    `json:"step,omitempty"`
	StepDescription string `json:"step_description,omitempty"`
	// Where is "fixture", "target", "return", "error", a state file path
	// (".nexus/state/plan.json"), or "schema <path>".
	Where    string `json:"where"`
	Path     string `json:"path,omitempty"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
}

func (f Failure) String() string {
	var b strings.Builder
	if f.Step > 0 {
		fmt.Fprintf(&b, "step %d: ", f.Step)
	}
	b.WriteString(f.Where)
	if f.Path != "" {
		b.WriteString(" " + f.Path)
	}
	b.WriteString(": ")
	if f.Message != "" {
		b.WriteString(f.Message)
	} else {
		fmt.Fprintf(&b, "expected %s, got %s", f.Expected, f.Actual)
		if f.Reason != "" {
			b.WriteString(" (" + f.Reason + ")")
		}
	}
	return b.String()
}

// Result is the outcome of one case.
type Result struct {
	ID         string        `json:"test_id"`
	Source     string        `json:"source"`
	Status     Status        `json:"status"`
	Failures   []Failure     `json:"failures,omitempty"`
	SkipReason string        `json:"skip_reason,omitempty"`
	Notes      []string      `json:"notes,omitempty"`
	Duration   time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for the JSON report.
	DurationMS float64 `json:"duration_ms"`
}

// Options configure a Runner.
type Options struct {
	// Factory makes the harness under test (required).
	Factory Factory
	// Schemas validates the state files (required); usually
	// schema.NewCoreSet(coreDir).
	Schemas Validator
	// HarnessID is the namespace for lifecycle events whose fixture names
	// none ("" = DefaultHarnessID).
	HarnessID string
	// Workers is how many cases run at once (0 = GOMAXPROCS).
	Workers int
	// TempDir is where scratch projects are made ("" = ScratchDir()).
	TempDir string
	// CaseTimeout bounds one case (0 = one minute).
	CaseTimeout time.Duration
}

// Runner runs cases.
type Runner struct{ opts Options }

// NewRunner checks the options and returns a runner.
func NewRunner(o Options) (*Runner, error) {
	if o.Factory == nil {
		return nil, errors.New("conformance: no target factory")
	}
	if o.Schemas == nil {
		return nil, errors.New("conformance: no schema validator")
	}
	if o.HarnessID == "" {
		o.HarnessID = DefaultHarnessID
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.CaseTimeout <= 0 {
		o.CaseTimeout = time.Minute
	}
	if o.TempDir == "" {
		o.TempDir = ScratchDir()
	}
	return &Runner{opts: o}, nil
}

// Check asks the factory, when it can tell, whether its target starts at
// all, in a scratch folder under the runner's TempDir.
func (r *Runner) Check(ctx context.Context) error {
	c, ok := r.opts.Factory.(Checker)
	if !ok {
		return nil
	}
	dir, err := os.MkdirTemp(r.opts.TempDir, "nexus-conformance-check-")
	if err != nil {
		return fmt.Errorf("create a scratch project: %w", err)
	}
	defer os.RemoveAll(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.CaseTimeout)
	defer cancel()
	return c.Check(ctx, dir)
}

// ScratchDir is where scratch projects go by default: $TMPDIR when it is
// set, else /dev/shm when it is a writable directory (a memory file system:
// every case creates and deletes a small tree, and each write is synced,
// which on a disk-backed /tmp costs more than the harness's own work), else
// os.TempDir().
func ScratchDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	const shm = "/dev/shm"
	if st, err := os.Stat(shm); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp(shm, "nexus-probe-"); err == nil {
			os.Remove(d)
			return shm
		}
	}
	return os.TempDir()
}

// Run runs the cases, Workers at a time, each in its own scratch project.
// emit (may be nil) receives each result in case order as soon as it and
// all before it are done, so streamed output is deterministic.
func (r *Runner) Run(ctx context.Context, cases []*Case, emit func(*Result)) []*Result {
	results := make([]*Result, len(cases))
	done := make([]chan struct{}, len(cases))
	for i := range done {
		done[i] = make(chan struct{})
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(r.opts.Workers, max(len(cases), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = r.RunCase(ctx, cases[i])
				close(done[i])
			}
		}()
	}
	go func() {
		for i := range cases {
			jobs <- i
		}
		close(jobs)
	}()
	for i := range cases {
		<-done[i]
		if emit != nil {
			emit(results[i])
		}
	}
	wg.Wait()
	return results
}

// RunCase runs one case in a fresh scratch project.
func (r *Runner) RunCase(ctx context.Context, c *Case) *Result {
	start := time.Now()
	res := &Result{ID: c.ID, Source: c.Source, Notes: append([]string(nil), c.Notes...)}
	defer func() {
		res.Duration = time.Since(start)
		res.DurationMS = float64(res.Duration.Microseconds()) / 1000
		res.Notes = dedupe(res.Notes)
		switch {
		case res.Status == Skip:
		case len(res.Failures) > 0:
			res.Status = Fail
		default:
			res.Status = Pass
		}
	}()
	if c.Err != nil {
		res.Failures = append(res.Failures, Failure{Where: "fixture", Message: c.Err.Error()})
		return res
	}
	f := c.Fixture
	if f.UsesEvents() {
		if why := r.opts.Factory.EventsUnsupported(); why != "" {
			res.Status, res.SkipReason = Skip, why
			return res
		}
	}
	if tu, ok := r.opts.Factory.(ToolsUnsupported); ok && f.UsesActions() {
		if why := tu.ToolsUnsupported(); why != "" {
			res.Status, res.SkipReason = Skip, why
			return res
		}
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.CaseTimeout)
	defer cancel()
	run := &caseRun{r: r, res: res, fixture: f, harnessID: f.HarnessID()}
	if run.harnessID == "" {
		run.harnessID = r.opts.HarnessID
	}
	if err := run.execute(ctx); err != nil {
		res.Failures = append(res.Failures, failureFromError(err))
	}
	return res
}

// failureFromError classifies an error that stopped a case.
func failureFromError(err error) Failure {
	var fe *assertion.FixtureError
	if errors.As(err, &fe) {
		return Failure{Where: "fixture", Message: fe.Msg}
	}
	var se *stepError
	if errors.As(err, &se) {
		f := failureFromError(se.err)
		f.Step, f.StepDescription = se.step, se.desc
		return f
	}
	return Failure{Where: "target", Message: err.Error()}
}

type stepError struct {
	step int
	desc string
	err  error
}

func (e *stepError) Error() string { return fmt.Sprintf("step %d: %v", e.step, e.err) }
func (e *stepError) Unwrap() error { return e.err }

// caseRun is the state of one running case.
type caseRun struct {
	r         *Runner
	res       *Result
	fixture   *Fixture
	harnessID string
	dir       string
	target    Target
	base      baseline
}

func (run *caseRun) execute(ctx context.Context) (err error) {
	tmp, err := os.MkdirTemp(run.r.opts.TempDir, "nexus-conformance-")
	if err != nil {
		return fmt.Errorf("create scratch project: %w", err)
	}
	defer os.RemoveAll(tmp)
	// Resolve symlinks (macOS /tmp) so paths a harness reports compare
	// equal to ours.
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	run.dir = tmp
	if err := run.applyPrecondition(); err != nil {
		return err
	}
	p := Project{Dir: tmp, NexusDir: filepath.Join(tmp, ".nexus"), HarnessID: run.harnessID}
	t, err := run.r.opts.Factory.NewTarget(ctx, p)
	if err != nil {
		return fmt.Errorf("start target: %w", err)
	}
	run.target = t
	defer func() {
		if cerr := t.Close(); cerr != nil && err == nil && len(run.res.Failures) == 0 {
			err = fmt.Errorf("close target: %w", cerr)
		}
	}()
	f := run.fixture
	switch {
	case f.Action != nil || f.Event != nil:
		out, fails, err := run.call(ctx, f.Action, f.Event)
		if err != nil {
			return err
		}
		run.res.Failures = append(run.res.Failures, fails...)
		run.checkPost(f.Post, out, 0, "")
	default:
		var last outcome
		for i, s := range f.Steps {
			out, fails, err := run.call(ctx, s.Action, s.Event)
			if err != nil {
				return &stepError{step: i + 1, desc: s.Description, err: err}
			}
			before := len(run.res.Failures)
			for _, fl := range fails {
				run.fail(i+1, s.Description, fl)
			}
			run.checkStep(s, out, i+1)
			if len(run.res.Failures) > before {
				return nil // stop at the first failing step
			}
			last = out
		}
		run.checkPost(f.Post, last, 0, "")
	}
	return nil
}

// applyPrecondition writes the precondition into the scratch project:
// null deletes, {} creates when missing, anything else is written as JSON.
func (run *caseRun) applyPrecondition() error {
	run.base = baseline{files: map[string][]byte{}}
	for _, spec := range run.fixture.Precondition {
		rel, err := expandPath(spec.Key, run.harnessID)
		if err != nil {
			return err
		}
		path := filepath.Join(run.dir, rel)
		switch spec.Kind {
		case FileAbsent:
			if err := os.RemoveAll(path); err != nil {
				return fmt.Errorf("precondition: remove %s: %w", rel, err)
			}
			delete(run.base.files, rel)
			continue
		case FileExists:
			if _, err := os.Stat(path); err == nil {
				continue
			}
			spec.Content = json.RawMessage(`{}`)
		}
		data := append(bytes.TrimSpace(spec.Content), '\n')
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("precondition: %w", err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("precondition: %w", err)
		}
		run.base.files[rel] = data
		if rel == historyFile {
			var h struct {
				Cycles []json.RawMessage `json:"cycles"`
			}
			if json.Unmarshal(data, &h) == nil {
				run.base.historyCycles = len(h.Cycles)
			}
		}
	}
	return nil
}

// outcome is what one action or event produced.
type outcome struct {
	event  bool
	value  any     // the parsed return value (JSON-shaped; {} for events)
	errMsg *string // set when the call failed with a domain error
}

// doc is what return assertions are evaluated against: the return value,
// or the error envelope {"error": message} (digest §6.7).
func (o outcome) doc() any {
	if o.errMsg != nil {
		return map[string]any{"error": *o.errMsg}
	}
	return o.value
}

// call runs one action or event and then checks every state file against
// its schema (violations are returned as failures). A non-nil error means
// the target broke.
func (run *caseRun) call(ctx context.Context, a *Action, e *Event) (outcome, []Failure, error) {
	before, hadHistory := snapshotHistory(run.dir)
	var out outcome
	var err error
	name := ""
	if a != nil {
		name = a.Tool
		var params map[string]any
		if err := json.Unmarshal(a.Params, &params); err != nil {
			return out, nil, &assertion.FixtureError{Msg: fmt.Sprintf("action %s params: %v", a.Tool, err)}
		}
		var ret map[string]any
		ret, err = run.target.CallTool(ctx, a.Tool, params)
		if err == nil {
			if out.value, err = normalise(ret); err != nil {
				return out, nil, fmt.Errorf("%s returned a value that is not JSON: %w", a.Tool, err)
			}
		}
	} else {
		// An event returns nothing: its return value is {} (or the error
		// envelope), so a step can still assert "$.error" on it.
		name = "event " + e.Type
		out.event = true
		out.value = map[string]any{}
		var params map[string]any
		if err := json.Unmarshal(e.Params, &params); err != nil {
			return out, nil, &assertion.FixtureError{Msg: fmt.Sprintf("event %s params: %v", e.Type, err)}
		}
		err = run.target.Event(ctx, e.Type, params)
	}
	if err != nil {
		te := AsToolError(err)
		if te == nil {
			return out, nil, fmt.Errorf("%s: %w", name, err)
		}
		msg := te.Message
		out.errMsg = &msg
		if te.Note != "" {
			run.res.Notes = append(run.res.Notes, te.Note)
		}
	}
	fails, notes := run.r.checkState(run.dir, run.base, before, hadHistory)
	run.res.Notes = append(run.res.Notes, notes...)
	return out, fails, nil
}

// normalise round-trips a return value through JSON so assertions see what
// a client would (structs become objects, numbers json.Number).
func normalise(v map[string]any) (any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return decodeNumbers(buf.Bytes())
}

func (run *caseRun) fail(step int, desc string, f Failure) {
	f.Step, f.StepDescription = step, desc
	run.res.Failures = append(run.res.Failures, f)
}

// checkErrorExpectation compares "must it fail?" with "did it fail?".
// It returns false when they disagree (further return checks are noise).
func (run *caseRun) checkErrorExpectation(expect bool, out outcome, step int, desc string) bool {
	switch {
	case expect && out.errMsg == nil:
		actual := "success"
		if !out.event {
			actual = assertion.Render(out.value, true)
		}
		run.fail(step, desc, Failure{Where: "error", Expected: "an error", Actual: actual})
		return false
	case !expect && out.errMsg != nil:
		run.fail(step, desc, Failure{Where: "error", Expected: "success", Actual: fmt.Sprintf("error %q", *out.errMsg)})
		return false
	}
	return true
}

func (run *caseRun) checkStep(s Step, out outcome, step int) {
	if !run.checkErrorExpectation(s.AssertReturn.ExpectsError(), out, step, s.Description) {
		return
	}
	for _, m := range s.AssertReturn.Check(out.doc()) {
		run.fail(step, s.Description, mismatchFailure("return", m))
	}
	run.checkFiles(s.AssertState, step, s.Description)
}

func (run *caseRun) checkPost(p *Postcondition, out outcome, step int, desc string) {
	if p == nil {
		// No postcondition: the call must at least not fail.
		if out.errMsg != nil {
			run.checkErrorExpectation(false, out, step, desc)
		}
		return
	}
	if run.checkErrorExpectation(p.ExpectsError(), out, step, desc) {
		if p.ErrorContains != nil && !strings.Contains(*out.errMsg, *p.ErrorContains) {
			run.fail(step, desc, Failure{Where: "error", Expected: fmt.Sprintf("a message containing %q", *p.ErrorContains), Actual: fmt.Sprintf("%q", *out.errMsg)})
		}
		for _, m := range p.ReturnValue.Check(out.doc()) {
			run.fail(step, desc, mismatchFailure("return", m))
		}
	}
	// State is checked even on error cases: a failed call must not have
	// created or changed files.
	run.checkFiles(p.StateFiles, step, desc)
}

func mismatchFailure(where string, m assertion.Mismatch) Failure {
	return Failure{Where: where, Path: m.Path, Expected: m.Expected, Actual: m.Actual, Reason: m.Reason}
}

// checkFiles evaluates state_files / assert_state entries.
func (run *caseRun) checkFiles(specs []FileSpec, step int, desc string) {
	for _, spec := range specs {
		rel, err := expandPath(spec.Key, run.harnessID)
		if err != nil {
			run.fail(step, desc, failureFromError(err))
			continue
		}
		shown := filepath.ToSlash(rel)
		path := filepath.Join(run.dir, rel)
		_, statErr := os.Stat(path)
		exists := statErr == nil
		switch spec.Kind {
		case FileAbsent:
			if exists {
				run.fail(step, desc, Failure{Where: shown, Expected: "no file", Actual: "the file exists"})
			}
			continue
		case FileExists:
			if !exists {
				run.fail(step, desc, Failure{Where: shown, Expected: "the file to exist", Actual: "no file"})
			}
			continue
		}
		if !exists {
			run.fail(step, desc, Failure{Where: shown, Expected: "the file to exist", Actual: "no file"})
			continue
		}
		doc, err := readDoc(path)
		if err != nil {
			run.fail(step, desc, Failure{Where: shown, Message: err.Error()})
			continue
		}
		for _, m := range spec.Block.Check(doc) {
			run.fail(step, desc, mismatchFailure(shown, m))
		}
	}
}

// readDoc parses a state file for assertions. A .jsonl file is read as the
// array of its non-empty lines.
func readDoc(path string) (any, error) {
	data, err := readScratch(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".jsonl") {
		lines := []any{}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			v, err := decodeNumbers(line)
			if err != nil {
				return nil, fmt.Errorf("line %d is not JSON: %v", i+1, err)
			}
			lines = append(lines, v)
		}
		return lines, nil
	}
	v, err := decodeNumbers(data)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	return v, nil
}

func dedupe(ss []string) []string {
	if len(ss) < 2 {
		return ss
	}
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
