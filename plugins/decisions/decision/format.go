package decision

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyyaml"
)

// Frontmatter selects which frontmatter keys Format writes.
type Frontmatter string

// Frontmatter modes.
const (
	// Documented omits null optional keys and an empty files_affected, as
	// the Nauro documentation describes (nexus's default).
	Documented Frontmatter = "documented"
	// Reference writes all ten keys exactly as the reference code does.
	Reference Frontmatter = "reference"
)

// ParseFrontmatter accepts "documented" (or "") and "reference".
func ParseFrontmatter(s string) (Frontmatter, error) {
	switch s {
	case "", string(Documented):
		return Documented, nil
	case string(Reference):
		return Reference, nil
	}
	return "", fmt.Errorf("frontmatter mode %q is not valid: use %q or %q", s, Documented, Reference)
}

// Format renders d in canonical form. The title is written as given; the
// rationale and reasons are stripped.
func Format(d *Decision, mode Frontmatter) string {
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString(frontmatter(d, mode))
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %03d \u2014 %s\n\n", d.Num, d.Title)
	b.WriteString("## Decision\n\n")
	b.WriteString(pytext.Strip(d.Rationale))
	if len(d.Rejected) > 0 {
		b.WriteString("\n\n## Rejected Alternatives")
		for _, r := range d.Rejected {
			b.WriteString("\n\n### ")
			b.WriteString(r.Name)
			if r.Reason != nil {
				if reason := pytext.Strip(*r.Reason); reason != "" {
					b.WriteString("\n\n")
					b.WriteString(reason)
				}
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

func frontmatter(d *Decision, mode Frontmatter) string {
	all := mode == Reference
	w := pyyaml.NewWriter()
	w.Raw("date", d.Date.String())
	w.Raw("version", strconv.Itoa(d.Version))
	w.Raw("status", d.Status)
	w.Raw("confidence", d.Confidence)
	for _, kv := range [][2]string{{"decision_type", d.DecisionType}, {"reversibility", d.Reversibility}, {"source", d.Source}} {
		switch {
		case kv[1] != "":
			w.Raw(kv[0], kv[1])
		case all:
			w.Raw(kv[0], "null")
		}
	}
	switch {
	case len(d.FilesAffected) > 0:
		w.KeyOnly("files_affected")
		for _, f := range d.FilesAffected {
			w.SequenceItem(f)
		}
	case all:
		w.Raw("files_affected", "[]")
	}
	for _, kv := range [][2]string{{"supersedes", d.Supersedes}, {"superseded_by", d.SupersededBy}} {
		switch {
		case kv[1] != "":
			w.StringValue(kv[0], kv[1])
		case all:
			w.Raw(kv[0], "null")
		}
	}
	// Current Nauro's approval keys (a null one is left out in both
	// forms), then the other keys in first-seen order.
	for i, p := range d.Approval.fields() {
		if *p != "" {
			w.StringValue(approvalKeys[i], *p)
		}
	}
	for _, e := range d.Extra {
		if err := w.Entry(e.Key, e.Value); err != nil {
			// Parse and Validate refuse such values; never drop a key silently.
			panic(fmt.Sprintf("decision: %v", err))
		}
	}
	return w.String()
}
