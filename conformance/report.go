package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
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
func WriteText(w io.Writer, r *Result) {
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
		fmt.Fprintln(w, "      note: "+n)
	}
}

// Report is the --json document.
type Report struct {
	Target     string    `json:"target"`
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
	s := Summarise(results)
	doc := junitSuites{Name: "nexus-core conformance", Tests: len(results), Failures: s.Failed, Skipped: s.Skipped, Time: seconds(elapsed)}
	index := map[string]int{}
	durations := map[string]time.Duration{}
	for _, r := range results {
		i, ok := index[r.Source]
		if !ok {
			i = len(doc.Suites)
			index[r.Source] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: r.Source})
		}
		suite := &doc.Suites[i]
		durations[r.Source] += r.Duration
		c := junitCase{Name: r.ID, Classname: classname(r.Source), Time: seconds(r.Duration)}
		switch r.Status {
		case Fail:
			suite.Failures++
			var body []string
			for _, f := range r.Failures {
				body = append(body, f.String())
			}
			c.Failure = &junitMessage{Message: body[0], Type: "conformance", Body: strings.Join(body, "\n")}
		case Skip:
			suite.Skipped++
			c.Skipped = &junitMessage{Message: r.SkipReason}
		}
		if len(r.Notes) > 0 {
			c.SystemOut = "note: " + strings.Join(r.Notes, "\nnote: ")
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
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
