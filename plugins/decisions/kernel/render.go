package kernel

import (
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// RenderCheck is the text the check_decision tool returns (the reference's
// render_check_decision).
func RenderCheck(r *CheckResult) string {
	return renderCheck(r) + RenderProblems(r.Problems)
}

func renderCheck(r *CheckResult) string {
	if r.Error != nil {
		return "Error: " + r.Error.Reason
	}
	if len(r.Related) == 0 {
		if a := pytext.Strip(r.Assessment); a != "" {
			return a
		}
		return NoRelatedDecisions
	}
	var b strings.Builder
	if len(r.Related) == 1 {
		b.WriteString("Found 1 related decision:\n\n")
	} else {
		fmt.Fprintf(&b, "Found %d related decisions:\n\n", len(r.Related))
	}
	for i, h := range r.Related {
		fmt.Fprintf(&b, "  - %s  [%s]  BM25 %5.2f", decision.Label(h.Num), h.Status, h.Score)
		if i == 0 {
			b.WriteString("    <- top match")
		}
		b.WriteString("\n    " + pytext.Truncate(h.Title, 70) + "\n")
		if i == 0 && h.RationalePreview != "" {
			preview := strings.ReplaceAll(h.RationalePreview, "\n", " ")
			b.WriteString("    \"" + pytext.Truncate(preview, 74) + "\"\n")
		}
		b.WriteString("\n")
	}
	tail := "Call get_decision on each related decision before proposing."
	if i := strings.Index(r.Assessment, "Call "); i >= 0 {
		tail = r.Assessment[i:]
	}
	b.WriteString(tail)
	return pytext.RStrip(b.String())
}
