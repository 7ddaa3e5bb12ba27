package kernel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// NoDecisionsToCheck is check_decision's answer for a store holding nothing
// but the scaffold seed.
const NoDecisionsToCheck = "No existing decisions to check against.\n\nUse propose_decision to record your first architectural decision, then check_decision can help verify new approaches against your recorded decisions."

// NoRelatedDecisions is check_decision's answer when nothing scores.
const NoRelatedDecisions = "No related decisions found."

// ErrorPayload is the reference's ErrorPayload: kind "rejected" for a
// caller-fixable input problem, "error" for an operation-side failure.
type ErrorPayload struct {
	Kind     string
	Reason   string
	Guidance string // omitted when empty
}

// JSON renders the payload as an ordered object.
func (e *ErrorPayload) JSON() *pyjson.Object {
	o := pyjson.NewObject().Set("kind", e.Kind).Set("reason", e.Reason)
	if e.Guidance != "" {
		o.Set("guidance", e.Guidance)
	}
	return o
}

// RelatedDecision is one BM25 hit.
type RelatedDecision struct {
	ID               string  // decision-NNN
	Num              int     //
	Title            string  //
	Score            float64 // round(raw, 3)
	Raw              float32 // the float32 BM25 score
	Status           string
	Date             string
	RationalePreview string
}

// JSON renders the reference's RelatedDecision fields.
func (r RelatedDecision) JSON() *pyjson.Object {
	return pyjson.NewObject().Set("id", r.ID).Set("title", r.Title).Set("score", r.Score).
		Set("status", r.Status).Set("date", r.Date).Set("rationale_preview", r.RationalePreview)
}

// CheckResult is check_decision's result.
type CheckResult struct {
	Related    []RelatedDecision
	Assessment string
	Error      *ErrorPayload
	Problems   []Problem // decision files that could not be read
}

// Round3 is Python's round(x, 3): correctly rounded on the exact binary
// value.
func Round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}

func lengthError(label string, text string, max int) *ErrorPayload {
	if n := pytext.Len(text); n > max {
		return &ErrorPayload{Kind: "rejected", Reason: fmt.Sprintf("%s exceeds maximum length of %d characters (got %d).", label, max, n)}
	}
	return nil
}

// CheckWithProblems is Check, reporting the files the corpus could not
// read next to the result.
func CheckWithProblems(c *Corpus, approach, context string) (*CheckResult, error) {
	r, err := Check(c, approach, context)
	if r != nil && r.Error == nil {
		r.Problems = c.Problems
	}
	return r, err
}

// Check is check_decision: rank the active decisions (seed excluded) by
// BM25 against the proposed approach. Over-length input is rejected, never
// truncated.
func Check(c *Corpus, approach, context string) (*CheckResult, error) {
	if e := lengthError("Proposed approach", approach, MaxApproachLength); e != nil {
		return &CheckResult{Error: e}, nil
	}
	if context != "" {
		if e := lengthError("Context", context, MaxContextLength); e != nil {
			return &CheckResult{Error: e}, nil
		}
	}
	if !c.hasNonSeed() {
		return &CheckResult{Assessment: NoDecisionsToCheck}, nil
	}
	hits, err := c.related(ShapeQuery(approach, context))
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		return &CheckResult{Assessment: NoRelatedDecisions}, nil
	}
	return &CheckResult{Related: hits, Assessment: assessment(hits)}, nil
}

// ShapeQuery builds check_decision's BM25 query: the first 100 code points
// of the approach, ". ", then the first 200 of approach + " " + context (the
// head therefore counts twice, as in the reference).
func ShapeQuery(approach, context string) string {
	body := approach
	if context != "" {
		body += " " + context
	}
	return pytext.Head(approach, 100) + ". " + pytext.Head(body, 200)
}

// related runs the check index for a query, top 5, positive scores only.
func (c *Corpus) related(query string) ([]RelatedDecision, error) {
	si, err := c.checkIndex()
	if err != nil {
		return nil, err
	}
	q := si.tok.Tokens(query)
	var out []RelatedDecision
	for _, h := range si.ix.Top(q, CheckTopK) {
		d, err := c.Full(si.entries[h.Doc])
		if err != nil {
			return nil, err
		}
		out = append(out, relatedOf(d, h.Score))
	}
	return out, nil
}

func relatedOf(d *decision.Decision, raw float32) RelatedDecision {
	return RelatedDecision{
		ID: fmt.Sprintf("decision-%03d", d.Num), Num: d.Num, Title: d.Title,
		Score: Round3(float64(raw)), Raw: raw, Status: d.Status, Date: d.Date.String(),
		RationalePreview: pytext.Head(d.Rationale, 200),
	}
}

func assessment(hits []RelatedDecision) string {
	top := hits[0]
	line := fmt.Sprintf("Top match: %s \"%s\" (status %s, decided %s, BM25 %s).",
		decision.Label(top.Num), top.Title, top.Status, top.Date, strconv.FormatFloat(top.Score, 'f', 1, 64))
	if len(hits) == 1 {
		return fmt.Sprintf("%s Call get_decision(%d) before proposing.", line, top.Num)
	}
	return fmt.Sprintf("Found %d related decisions. %s Call get_decision on each related decision before proposing.", len(hits), line)
}

// Envelope is the local MCP envelope of a check result (nulls dropped).
func (r *CheckResult) Envelope() *pyjson.Object {
	o := pyjson.NewObject().Set("store", "local")
	rel := make([]any, len(r.Related))
	for i, h := range r.Related {
		rel[i] = h.JSON()
	}
	o.Set("related_decisions", rel).Set("assessment", r.Assessment)
	if r.Error != nil {
		o.Set("error", r.Error.JSON())
	}
	return WithProblems(o, r.Problems)
}

// WithProblems adds "unreadable_decisions": [{file, reason}] to an
// envelope when some decision files could not be read (nexus's addition;
// absent otherwise, so the reference's payloads are unchanged).
func WithProblems(o *pyjson.Object, ps []Problem) *pyjson.Object {
	if len(ps) == 0 {
		return o
	}
	items := make([]any, len(ps))
	for i, p := range ps {
		items[i] = pyjson.NewObject().Set("file", p.File).Set("reason", p.Reason)
	}
	return o.Set("unreadable_decisions", items)
}

// RenderProblems is the text appended to a tool's answer when decision
// files could not be read ("" when none).
func RenderProblems(ps []Problem) string {
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	if len(ps) == 1 {
		b.WriteString("\n\n1 decision file could not be read and was left out:")
	} else {
		fmt.Fprintf(&b, "\n\n%d decision files could not be read and were left out:", len(ps))
	}
	for _, p := range ps {
		b.WriteString("\n  - " + p.File + ": " + pytext.Head(p.Reason, 300))
	}
	return b.String()
}
