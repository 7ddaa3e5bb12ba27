package kernel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// Operations of propose_decision.
const (
	OpAdd       = "add"
	OpUpdate    = "update"
	OpSupersede = "supersede"
	OpReject    = "reject"
)

// Assessments of a confirmed proposal.
const (
	AssessSimilar   = "Tier 2 surfaced similar decisions; review them and confirm with the user before proposing further related writes."
	AssessNoSimilar = "No similar existing decisions found."
)

// ProposeRequest are the kernel arguments of propose_decision. Pointer
// fields are None when nil; Rejected and FilesAffected take the loose
// shapes the reference accepts (nil, a string, or a JSON list).
type ProposeRequest struct {
	Title              string
	Rationale          string
	Operation          string // "" means add
	AffectedDecisionID string // "" means none
	Rejected           any
	Confidence         *string
	DecisionType       *string
	Reversibility      *string
	Source             *string
	FilesAffected      any
	ResolvesQuestions  []string
}

// ProposeOptions carry the clock and the frontmatter form to write.
type ProposeOptions struct {
	Now         time.Time
	Frontmatter decision.Frontmatter
}

// ProposeResult is the reference's ProposeDecisionResult.
type ProposeResult struct {
	Status     string // confirmed | rejected
	Tier       int
	Operation  string
	Similar    []RelatedDecision
	Assessment string
	DecisionID string // "" = null
	Touched    []string
	Resolved   []string
	Error      *ErrorPayload
}

// JSON renders every field in the reference's order, nulls included.
func (r *ProposeResult) JSON() *pyjson.Object {
	sim := make([]any, len(r.Similar))
	for i, h := range r.Similar {
		sim[i] = h.JSON()
	}
	o := pyjson.NewObject().Set("status", r.Status).Set("tier", r.Tier).Set("operation", r.Operation).
		Set("similar_decisions", sim).Set("assessment", r.Assessment)
	if r.DecisionID == "" {
		o.Set("decision_id", nil)
	} else {
		o.Set("decision_id", r.DecisionID)
	}
	o.Set("touched_decisions", strs(r.Touched)).Set("resolved_questions", strs(r.Resolved))
	if r.Error == nil {
		o.Set("error", nil)
	} else {
		o.Set("error", r.Error.JSON())
	}
	return o
}

// Envelope is the local MCP response: nulls dropped, touched_decisions
// dropped, empty similar/resolved lists dropped, "store" first.
func (r *ProposeResult) Envelope() *pyjson.Object {
	full := r.JSON()
	o := pyjson.NewObject().Set("store", "local")
	for _, k := range full.Keys() {
		v, _ := full.Get(k)
		switch {
		case v == nil, k == "touched_decisions":
			continue
		case (k == "similar_decisions" || k == "resolved_questions") && len(v.([]any)) == 0:
			continue
		}
		o.Set(k, v)
	}
	return o
}

func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// truthy is Python truthiness for the loose request values, with the
// reference's extra rule that a blank string does not count.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return pytext.Strip(x) != ""
	case *string:
		return x != nil && pytext.Strip(*x) != ""
	case []any:
		return len(x) > 0
	case []string:
		return len(x) > 0
	case bool:
		return x
	case float64:
		return x != 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// ContentHash is the exact-duplicate key of a proposal.
func ContentHash(title, rationale string) string {
	sum := sha256.Sum256([]byte(pytext.Lower(pytext.Strip(title)) + "|" + pytext.Lower(pytext.Strip(rationale))))
	return hex.EncodeToString(sum[:])
}

// IsoTimestamp is Python's datetime.isoformat() of a UTC time (the
// microseconds are left out when zero).
func IsoTimestamp(t time.Time) string {
	t = t.UTC()
	if us := t.Nanosecond() / 1000; us != 0 {
		return t.Format("2006-01-02T15:04:05") + fmt.Sprintf(".%06d", us) + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

func today(t time.Time) string { return t.UTC().Format("2006-01-02") }

func rejectedResult(tier int, op, assessment string) *ProposeResult {
	return &ProposeResult{Status: "rejected", Tier: tier, Operation: op, Assessment: assessment}
}

// Propose is propose_decision: screening (tiers 0 and 1), the advisory
// BM25 screen (tier 2) and the write. A returned error is a failure the
// reference lets escape as an exception (an invalid enum value, a
// reasonless alternative); everything else is a result.
func Propose(ctx context.Context, s Store, req ProposeRequest, opt ProposeOptions) (*ProposeResult, error) {
	op := req.Operation
	if op == "" {
		op = OpAdd
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if op == OpUpdate {
		var names []string
		for _, f := range []struct {
			name string
			v    any
		}{{"title", req.Title}, {"rejected", req.Rejected}, {"files_affected", req.FilesAffected},
			{"decision_type", req.DecisionType}, {"reversibility", req.Reversibility}, {"confidence", req.Confidence}} {
			if truthy(f.v) {
				names = append(names, f.name)
			}
		}
		if len(names) > 0 {
			return rejectedResult(0, OpUpdate, `operation="update" appends rationale only; cannot change `+strings.Join(names, ", ")+`. Use operation="supersede" to replace the decision with new metadata.`), nil
		}
	}
	if len(req.ResolvesQuestions) > 0 {
		text, _, err := s.ReadFile(OpenQuestionsFile)
		if err != nil {
			return nil, err
		}
		if msg := ParseQuestions(text).CheckResolvable(req.ResolvesQuestions); msg != "" {
			return rejectedResult(0, op, msg), nil
		}
	}

	corpus, err := Decisions(s)
	if err != nil {
		return nil, err
	}
	if msg, err := tier1(s, corpus, req, op); err != nil {
		return nil, err
	} else if msg != "" {
		return rejectedResult(1, OpReject, msg), nil
	}

	similar, err := corpus.related(req.Title + ". " + pytext.Head(req.Rationale, 200))
	if err != nil {
		return nil, err
	}
	w := writer{ctx: ctx, s: s, opt: opt}
	res, err := w.commit(req, op)
	if err != nil {
		return nil, err
	}
	res.Similar = similar
	if res.Status == "confirmed" {
		res.Assessment = AssessNoSimilar
		if len(similar) > 0 {
			res.Assessment = AssessSimilar
		}
	}
	return res, nil
}

func tier1(s Store, corpus *Corpus, req ProposeRequest, op string) (string, error) {
	rationale := pytext.Strip(req.Rationale)
	if op == OpUpdate {
		if rationale == "" {
			return "Rationale is empty.", nil
		}
		if n := pytext.Len(rationale); n < MinRationaleLength {
			return fmt.Sprintf("Rationale too short (%d chars). Minimum %d.", n, MinRationaleLength), nil
		}
		return "", nil
	}
	if pytext.Strip(req.Title) == "" {
		return "Title is empty.", nil
	}
	if rationale == "" {
		return "Rationale is empty.", nil
	}
	if req.Confidence == nil || !slices.Contains(decision.Confidences, *req.Confidence) {
		shown := "None"
		if req.Confidence != nil {
			shown = *req.Confidence
		}
		// The reference prints a Python set whose order depends on the
		// hash seed; nexus uses one fixed order.
		return "Invalid confidence: " + shown + ". Must be one of: {'high', 'low', 'medium'}", nil
	}
	if n := pytext.Len(rationale); n < MinRationaleLength {
		return fmt.Sprintf("Rationale too short (%d chars). Minimum %d.", n, MinRationaleLength), nil
	}
	index, err := loadHashes(s)
	if err != nil {
		return "", err
	}
	if _, dup := index.Get(ContentHash(req.Title, req.Rationale)); dup {
		return "Exact duplicate of existing decision (hash match).", nil
	}
	affected, hasAffected := 0, false
	if req.AffectedDecisionID != "" {
		affected, hasAffected = decision.NumberOf(req.AffectedDecisionID)
	}
	norm := func(t string) string { return strings.Join(pytext.Fields(pytext.Lower(t)), " ") }
	want := norm(req.Title)
	for _, e := range corpus.Entries {
		if e.D.Status != decision.StatusActive || (hasAffected && e.D.Num == affected) {
			continue
		}
		if norm(e.D.Title) == want {
			return fmt.Sprintf(`An active decision already has this title: D%d. Use operation="supersede" to replace it, or operation="update" to append rationale — not a second add.`, e.D.Num), nil
		}
	}
	return "", nil
}

// loadHashes reads .decision-hashes.json; anything unreadable is empty.
func loadHashes(s Store) (*pyjson.Object, error) {
	text, ok, err := s.ReadFile(HashesFile)
	if err != nil {
		return nil, err
	}
	if !ok || pytext.Strip(text) == "" {
		return pyjson.NewObject(), nil
	}
	v, err := pyjson.Parse(text)
	if o, isObj := v.(*pyjson.Object); err == nil && isObj {
		return o, nil
	}
	return pyjson.NewObject(), nil
}

type writer struct {
	ctx     context.Context
	s       Store
	opt     ProposeOptions
	touched []string
}

func (w *writer) fail(reason, id string) *ProposeResult {
	return &ProposeResult{Status: "rejected", Tier: 2, Operation: OpReject, Assessment: reason,
		DecisionID: id, Touched: w.touched, Error: &ErrorPayload{Kind: "error", Reason: reason}}
}

func (w *writer) commit(req ProposeRequest, op string) (*ProposeResult, error) {
	switch {
	case op == OpSupersede && req.AffectedDecisionID != "":
		return w.supersede(req)
	case op == OpUpdate && req.AffectedDecisionID != "":
		return w.update(req)
	}
	id, num, err := w.writeNew(req)
	if err != nil {
		return nil, err
	}
	return w.finish(req, OpAdd, id, num)
}

func (w *writer) finish(req ProposeRequest, op, id string, num int) (*ProposeResult, error) {
	resolved, err := w.resolveQuestions(req.ResolvesQuestions, num)
	if err != nil {
		return w.fail(fmt.Sprintf("question-resolution half-state: decision %s written; open-questions.md not updated (%s).", id, exceptionName(err)), id), nil
	}
	return &ProposeResult{Status: "confirmed", Tier: 2, Operation: op, DecisionID: id, Touched: w.touched, Resolved: resolved}, nil
}

func exceptionName(err error) string {
	if _, ok := err.(*decision.ParseError); ok {
		return "ValueError"
	}
	return "OSError"
}

func (w *writer) resolveQuestions(ids []string, num int) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	text, _, err := w.s.ReadFile(OpenQuestionsFile)
	if err != nil {
		return nil, err
	}
	q := ParseQuestions(text)
	resolved, changed := q.Resolve(ids, num, today(w.opt.Now))
	if changed {
		if err := w.s.WriteFile(w.ctx, OpenQuestionsFile, q.Format()); err != nil {
			return nil, err
		}
	}
	return resolved, nil
}

// enumValue maps None or a blank string to null and refuses values outside
// the validated set, as the reference's enum constructors do.
func enumValue(v *string, values []string, class string) (string, error) {
	if v == nil || pytext.Strip(*v) == "" {
		return "", nil
	}
	if !slices.Contains(values, *v) {
		return "", fmt.Errorf("%s is not a valid %s", pytext.Repr(*v), class)
	}
	return *v, nil
}

func filesOf(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		var arr []any
		if err := json.Unmarshal([]byte(x), &arr); err == nil {
			out := make([]string, len(arr))
			for i, it := range arr {
				out[i] = pyStr(it)
			}
			return out
		}
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, len(x))
		for i, it := range x {
			out[i] = pyStr(it)
		}
		return out
	}
	return nil
}

// pyStr is str() of a JSON value.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return pyjson.FloatRepr(x)
	}
	return fmt.Sprint(v)
}

func rejectedOf(v any) []decision.Rejected {
	var items []any
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if err := json.Unmarshal([]byte(x), &items); err != nil {
			return nil
		}
	case []any:
		items = x
	default:
		return nil
	}
	var out []decision.Rejected
	for _, it := range items {
		switch y := it.(type) {
		case map[string]any:
			name := firstTruthy(y["alternative"], y["name"])
			if name == "" {
				name = "Unknown"
			}
			alt := decision.Rejected{Name: name}
			if r := firstTruthy(y["reason"]); r != "" {
				alt.Reason = &r
			}
			out = append(out, alt)
		case string:
			out = append(out, decision.Rejected{Name: y})
		}
	}
	return out
}

func firstTruthy(vs ...any) string {
	for _, v := range vs {
		switch x := v.(type) {
		case nil:
		case string:
			if x != "" {
				return x
			}
		case bool:
			if x {
				return pyStr(x)
			}
		case float64:
			if x != 0 {
				return pyStr(x)
			}
		default:
			return fmt.Sprint(x)
		}
	}
	return ""
}

// writeNew writes a new decision (the reference's _write_decision_direct)
// and records its hash.
func (w *writer) writeNew(req ProposeRequest) (string, int, error) {
	stems, err := w.s.ListDecisions()
	if err != nil {
		return "", 0, err
	}
	num := NextNumber(stems)
	id := decision.Stem(num, decision.Slugify(req.Title))
	d := decision.New()
	d.Num, d.Title = num, req.Title
	d.Rationale = req.Rationale
	if d.Rationale == "" {
		d.Rationale = req.Title
	}
	d.Date, _ = decision.ParseDate(today(w.opt.Now))
	d.Confidence = "medium"
	if req.Confidence != nil && *req.Confidence != "" {
		d.Confidence = *req.Confidence
	}
	if d.DecisionType, err = enumValue(req.DecisionType, decision.DecisionTypes, "DecisionType"); err != nil {
		return "", 0, err
	}
	if d.Reversibility, err = enumValue(req.Reversibility, decision.Reversibility, "Reversibility"); err != nil {
		return "", 0, err
	}
	if d.Source, err = enumValue(req.Source, decision.Sources, "DecisionSource"); err != nil {
		return "", 0, err
	}
	d.FilesAffected = filesOf(req.FilesAffected)
	d.Rejected = rejectedOf(req.Rejected)
	if err := decision.Validate(d); err != nil {
		return "", 0, fmt.Errorf("1 validation error for Decision: %w", err)
	}
	if err := w.s.WriteFile(w.ctx, DecisionsDir+"/"+id+".md", decision.Format(d, w.opt.Frontmatter)); err != nil {
		return "", 0, err
	}
	w.touched = append(w.touched, id)
	index, err := loadHashes(w.s)
	if err != nil {
		return "", 0, err
	}
	index.Set(ContentHash(req.Title, req.Rationale), pyjson.NewObject().Set("decision_id", id).Set("timestamp", IsoTimestamp(w.opt.Now)))
	if err := w.s.WriteFile(w.ctx, HashesFile, pyjson.File(index)); err != nil {
		return "", 0, err
	}
	return id, num, nil
}

func (w *writer) readDecision(stem string) (*decision.Decision, bool, error) {
	text, ok, err := w.s.ReadFile(DecisionsDir + "/" + stem + ".md")
	if err != nil || !ok {
		return nil, false, err
	}
	d, err := decision.Parse(text, stem+".md")
	if err != nil {
		return nil, true, err
	}
	return d, true, nil
}

func (w *writer) rewrite(stem string, d *decision.Decision) error {
	return w.s.WriteFile(w.ctx, DecisionsDir+"/"+stem+".md", decision.Format(d, w.opt.Frontmatter))
}

func (w *writer) supersede(req ProposeRequest) (*ProposeResult, error) {
	affected := req.AffectedDecisionID
	oldNum, ok := decision.NumberOf(affected)
	if !ok {
		return w.fail(fmt.Sprintf("Cannot derive supersession ref from %s.", pytext.Repr(affected)), ""), nil
	}
	newID, newNum, err := w.writeNew(req)
	if err != nil {
		return nil, err
	}
	nd, found, err := w.readDecision(newID)
	if err != nil && !found {
		return nil, err
	}
	if !found || nd == nil {
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written but the kernel cannot read it back to attach supersedes ref.", newID), newID), nil
	}
	nd.Supersedes = strconv.Itoa(oldNum)
	if err := w.rewrite(newID, nd); err != nil {
		return nil, err
	}
	stems, err := w.s.ListDecisions()
	if err != nil {
		return nil, err
	}
	oldStem, ok := FindStem(stems, oldNum)
	if !ok {
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written; old decision matching %s not found to flip.", newID, pytext.Repr(affected)), newID), nil
	}
	od, found, err := w.readDecision(oldStem)
	switch {
	case !found && err == nil:
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written; old decision %s could not be read.", newID, oldStem), newID), nil
	case err != nil:
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written; old decision %s not flipped (%s).", newID, oldStem, exceptionName(err)), newID), nil
	}
	od.Status, od.SupersededBy = decision.StatusSuperseded, strconv.Itoa(newNum)
	if err := decision.Validate(od); err != nil {
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written; old decision %s not flipped (ValidationError).", newID, oldStem), newID), nil
	}
	if err := w.rewrite(oldStem, od); err != nil {
		return w.fail(fmt.Sprintf("supersede half-state: new decision %s written; old decision %s not flipped (OSError).", newID, oldStem), newID), nil
	}
	w.touched = append(w.touched, oldStem)
	return w.finish(req, OpSupersede, newID, newNum)
}

func (w *writer) update(req ProposeRequest) (*ProposeResult, error) {
	affected := req.AffectedDecisionID
	stems, err := w.s.ListDecisions()
	if err != nil {
		return nil, err
	}
	num, ok := decision.NumberOf(affected)
	stem := ""
	if ok {
		stem, ok = FindStem(stems, num)
	}
	if !ok {
		return w.fail(fmt.Sprintf("update target %s not found in store.", pytext.Repr(affected)), ""), nil
	}
	d, found, err := w.readDecision(stem)
	if !found || err != nil {
		return w.fail(fmt.Sprintf("update target %s could not be read.", stem), ""), nil
	}
	d.Version++
	d.Rationale = pytext.Strip(d.Rationale) + "\n\n" + fmt.Sprintf("*Update (v%d) \u2014 %s:* %s", d.Version, today(w.opt.Now), pytext.Strip(req.Rationale))
	if err := w.rewrite(stem, d); err != nil {
		return nil, err
	}
	w.touched = append(w.touched, stem)
	return w.finish(req, OpUpdate, stem, d.Num)
}
