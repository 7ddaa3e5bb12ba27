// Package decision is the Nauro decision file format: the model, the strict
// parser (every rule and error of the reference at commit 806d35f) and the
// byte-exact canonical formatter, in the documented and the reference
// frontmatter forms.
package decision

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyyaml"
)

// Status of a decision.
const (
	StatusActive     = "active"
	StatusSuperseded = "superseded"
)

// Field value sets, in the reference's enum order (error messages list
// them in this order).
var (
	Statuses       = []string{StatusActive, StatusSuperseded}
	Confidences    = []string{"high", "medium", "low"}
	DecisionTypes  = []string{"architecture", "api_design", "infrastructure", "pattern", "refactor", "data_model"}
	Reversibility  = []string{"easy", "moderate", "hard"}
	Sources        = []string{"mcp", "commit", "compaction", "manual", "import"}
	frontmatterKey = []string{"date", "version", "status", "confidence", "decision_type", "reversibility", "source", "files_affected", "supersedes", "superseded_by"}
)

// SchemaDecisionTypes is the decision_type enum the MCP propose_decision
// schema advertises: the validated set plus "library_choice", the
// reference's schema drift (proposing it fails at write time).
var SchemaDecisionTypes = []string{"architecture", "library_choice", "pattern", "refactor", "api_design", "infrastructure", "data_model"}

// Date is a calendar date.
type Date = pyyaml.Date

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("date %q is not YYYY-MM-DD", s)
	}
	y, e1 := strconv.Atoi(s[:4])
	m, e2 := strconv.Atoi(s[5:7])
	d, e3 := strconv.Atoi(s[8:])
	if e1 != nil || e2 != nil || e3 != nil || m < 1 || m > 12 || d < 1 || d > pyyaml.DaysIn(y, m) || y < 1 {
		return Date{}, fmt.Errorf("date %q is not a valid calendar date", s)
	}
	return Date{Year: y, Month: m, Day: d}, nil
}

// Rejected is a rejected alternative. A nil Reason is a reasonless
// rejection (allowed on superseded decisions only).
type Rejected struct {
	Name   string  `json:"name"`
	Reason *string `json:"reason"`
}

// Decision is one decision file. Optional enum and reference fields use ""
// for null: no valid value is empty.
type Decision struct {
	Date          Date
	Version       int
	Status        string
	Confidence    string
	DecisionType  string
	Reversibility string
	Source        string
	FilesAffected []string
	Supersedes    string
	SupersededBy  string
	Approval      Approval
	Extra         []Extra // other frontmatter keys, first-seen order
	Rejected      []Rejected

	Num       int    // from the file name
	Title     string // from the H1
	Rationale string // the ## Decision section, stripped
	Body      string // the text after the frontmatter
	Content   string // the whole file
}

// Approval is the provenance current Nauro records when a proposal is
// approved ("" for null). Either none is set or the first four are.
type Approval struct {
	ProposedBy, ApprovedBy, ApprovedAt, ProposalID, ProposedBaseCommit string
}

// approvalKeys are the approval frontmatter keys in model order.
var approvalKeys = []string{"proposed_by", "approved_by", "approved_at", "proposal_id", "proposed_base_commit"}

func (a *Approval) fields() []*string {
	return []*string{&a.ProposedBy, &a.ApprovedBy, &a.ApprovedAt, &a.ProposalID, &a.ProposedBaseCommit}
}

// Extra is a frontmatter key the model does not know, kept with the value
// PyYAML gave it (current Nauro's extra="allow").
type Extra struct {
	Key   string
	Value any
}

// New returns a decision with the model defaults (version 1, active).
func New() *Decision {
	return &Decision{Version: 1, Status: StatusActive}
}

// Clone returns a deep copy.
func (d *Decision) Clone() *Decision {
	c := *d
	c.FilesAffected = append([]string(nil), d.FilesAffected...)
	c.Rejected = append([]Rejected(nil), d.Rejected...)
	c.Extra = append([]Extra(nil), d.Extra...) // values are never mutated
	return &c
}

// IsSeed reports whether d is the scaffold's seed decision, which the
// conflict checks ignore.
func (d *Decision) IsSeed() bool { return d.Num == 1 && d.Title == SeedTitle }

// SeedTitle is the title of the decision `nauro init` writes.
const SeedTitle = "Initial project setup"

// Label is "D" plus the zero-padded number, e.g. D007.
func Label(num int) string { return fmt.Sprintf("D%03d", num) }

// enumMessage is pydantic's text for an enum mismatch.
func enumMessage(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	if len(q) == 1 {
		return "Input should be " + q[0]
	}
	return "Input should be " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
