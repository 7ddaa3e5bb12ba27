package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Summary counts verdicts.
type Summary struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Summarise counts the results.
func Summarise(results []*Result) Summary {
	var s Summary
	for _, r := range results {
		switch r.Status {
		case Pass:
			s.Passed++
		case Fail:
			s.Failed++
		case Skip:
			s.Skipped++
		}
	}
	return s
}

// String is the final line of the text report.
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return out
}

// WriteText prints one result: "STATUS  id", then for a failure the first
// reason on the same line and any further reasons, the skip reason and
// notes indented below.
func WriteText(w io.Writer, r *Result) { WriteResult(w, r, true) }

// upstreamNote is how a note about a tolerated deviation of nexus-core
// itself begins ("upstream deviation C7 tolerated: ...").
const upstreamNote = "upstream deviation "

// WriteResult is WriteText, leaving out the notes about known deviations
// of nexus-core itself unless verbose (UpstreamNotes counts them for the
// summary instead).
func WriteResult(w io.Writer, r *Result, verbose bool) {
	line := fmt.Sprintf("%s  %s", r.Status, r.ID)
	var more []string
	switch r.Status {
	case Fail:
		for i, f := range r.Failures {
			if i == 0 {
				line += "  " + f.String()
			} else {
				more = append(more, f.String())
			}
		}
		line += "  [" + r.Source + "]"
	case Skip:
		line += "  (" + r.SkipReason + ")"
	}
	fmt.Fprintln(w, line)
	for _, m := range more {
		fmt.Fprintln(w, "      "+m)
	}
	for _, n := range r.Notes {
		if verbose || !strings.HasPrefix(n, upstreamNote) {
			fmt.Fprintln(w, "      note: "+n)
		}
	}
}

// UpstreamNotes counts the results' notes about known deviations of
// nexus-core itself, and names the deviations (sorted, each once).
func UpstreamNotes(results []*Result) (n int, ids []string) {
	seen := map[string]bool{}
	for _, r := range results {
		for _, note := range r.Notes {
			rest, ok := strings.CutPrefix(note, upstreamNote)
			if !ok {
				continue
			}
			n++
			id, _, _ := strings.Cut(rest, " ")
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return n, ids
}

// Report is the --json document.
type Report struct {
	// Label names the harness in a comparison ("A", "B", ...).
	Label      string `json:"label,omitempty"`
	Target     string `json:"target"`
	HookTarget string `json:"hook_target,omitempty"`
	// StartError says why the harness did not start (no cases ran).
	StartError string    `json:"start_error,omitempty"`
	HarnessID  string    `json:"harness_id"`
	Core       string    `json:"core"`
	Notes      []string  `json:"notes,omitempty"`
	Cases      []*Result `json:"cases"`
	DurationMS float64   `json:"duration_ms"`
	Summary
}

// NewReport assembles a report.
func NewReport(target, harnessID, core string, notes []string, results []*Result, elapsed time.Duration) *Report {
	return &Report{
		Target: target, HarnessID: harnessID, Core: core, Notes: notes, Cases: results,
		DurationMS: float64(elapsed.Microseconds()) / 1000, Summary: Summarise(results),
	}
}

// JUnit XML, the subset CI systems read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the results as JUnit XML, one testsuite per fixture
// file in run order.
func WriteJUnit(w io.Writer, results []*Result, elapsed time.Duration) error {
	return WriteJUnitRuns(w, []*Run{{Results: results, Elapsed: elapsed}})
}

// WriteJUnitRuns writes several harnesses' results as one JUnit XML
// document: one testsuite per harness and fixture file, named
// "<label>: <file>" when the run has a label. A harness that did not start
// is one failing case.
func WriteJUnitRuns(w io.Writer, runs []*Run) error {
	doc := junitSuites{Name: "nexus-core conformance"}
	var total time.Duration
	index := map[string]int{}
	durations := map[string]time.Duration{}
	for _, run := range runs {
		total += run.Elapsed
		prefix, classPrefix := "", ""
		if run.Label != "" {
			prefix, classPrefix = run.Label+": ", run.Label+"."
		}
		results := run.Results
		if run.StartErr != nil {
			results = []*Result{{ID: "start", Source: "target", Status: Fail, Failures: []Failure{{Where: "target", Message: run.StartErr.Error()}}}}
		}
		for _, r := range results {
			name := prefix + r.Source
			i, ok := index[name]
			if !ok {
				i = len(doc.Suites)
				index[name] = i
				doc.Suites = append(doc.Suites, junitSuite{Name: name})
			}
			suite := &doc.Suites[i]
			durations[name] += r.Duration
			doc.Tests++
			c := junitCase{Name: r.ID, Classname: classPrefix + classname(r.Source), Time: seconds(r.Duration)}
			switch r.Status {
			case Fail:
				suite.Failures++
				doc.Failures++
				var body []string
				for _, f := range r.Failures {
					body = append(body, f.String())
				}
				c.Failure = &junitMessage{Message: body[0], Type: "conformance", Body: strings.Join(body, "\n")}
			case Skip:
				suite.Skipped++
				doc.Skipped++
				c.Skipped = &junitMessage{Message: r.SkipReason}
			}
			if len(r.Notes) > 0 {
				c.SystemOut = "note: " + strings.Join(r.Notes, "\nnote: ")
			}
			suite.Tests++
			suite.Cases = append(suite.Cases, c)
		}
	}
	doc.Time = seconds(total)
	for i := range doc.Suites {
		doc.Suites[i].Time = seconds(durations[doc.Suites[i].Name])
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// classname turns "tools/plan-start.json" into "tools.plan-start".
func classname(source string) string {
	s := strings.TrimSuffix(source, ".json")
	return strings.ReplaceAll(s, "/", ".")
}

// Run is one harness's run of the suite, for a comparison.
type Run struct {
	Label      string // "A", "B", ...
	Target     string // the MCP command ("" = nexus in-process)
	HookTarget string // the hook command ("" = none)
	StartErr   error  // the harness did not start; Results is empty
	Results    []*Result
	Elapsed    time.Duration
}

// Describe names the harness: its commands.
func (r *Run) Describe() string {
	s := r.Target
	if s == "" {
		s = "nexus (in-process)"
		if r.HookTarget != "" {
			s = "(no --target)"
		}
	}
	if r.HookTarget != "" {
		s += ", hooks: " + r.HookTarget
	}
	return s
}

// WriteComparison prints one table of cases × harnesses: a status column
// per harness, then for every harness whose verdict is not PASS the first
// reason, one line per case; then one summary line per harness with its run
// time. A harness that did not start is one line, not a column of failures.
func WriteComparison(w io.Writer, runs []*Run) {
	fmt.Fprintln(w, "harnesses:")
	for _, r := range runs {
		fmt.Fprintf(w, "  %s  %s\n", r.Label, r.Describe())
	}
	fmt.Fprintln(w)
	var ids []string
	seen := map[string]bool{}
	byRun := make([]map[string]*Result, len(runs))
	for i, r := range runs {
		byRun[i] = map[string]*Result{}
		for _, res := range r.Results {
			byRun[i][res.ID] = res
			if !seen[res.ID] {
				seen[res.ID] = true
				ids = append(ids, res.ID)
			}
		}
	}
	width := len("test_id")
	for _, id := range ids {
		width = max(width, len(id))
	}
	header := fmt.Sprintf("%-*s", width, "test_id")
	for _, r := range runs {
		header += fmt.Sprintf("  %-4s", r.Label)
	}
	fmt.Fprintln(w, strings.TrimRight(header, " "))
	for _, id := range ids {
		line := fmt.Sprintf("%-*s", width, id)
		var why []string
		for i, r := range runs {
			res := byRun[i][id]
			status := "-"
			switch {
			case r.StartErr != nil:
				status = "-" // did not start: said once, below
			case res != nil:
				status = string(res.Status)
			}
			line += fmt.Sprintf("  %-4s", status)
			if res != nil && res.Status != Pass {
				why = append(why, r.Label+": "+clipLine(reason(res), 110))
			}
		}
		if len(why) > 0 {
			line += "  " + strings.Join(why, "; ")
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		if r.StartErr != nil {
			fmt.Fprintf(w, "%s: did not start: %s\n", r.Label, r.StartErr)
			continue
		}
		fmt.Fprintf(w, "%s: %s in %.1f s\n", r.Label, Summarise(r.Results), r.Elapsed.Seconds())
	}
}

// reason is a result's first failure or its skip reason.
func reason(r *Result) string {
	switch {
	case r.Status == Skip:
		return "skipped: " + r.SkipReason
	case len(r.Failures) > 0:
		return r.Failures[0].String()
	}
	return ""
}

// clipLine keeps the first line of s, at most n runes.
func clipLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
