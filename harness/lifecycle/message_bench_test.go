package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkUserMessageTags is the prompt hook's work for messages of many
// repeated tags (issue 22: [d] × 20,000 once took 54 s end to end): tag
// detection, the first MaxInlineActions actions (each logs a line), the
// report of the rest and fitting the reply into Claude Code's budget.
// scripts/bench-hooks.sh measures the same prompt as a whole hook process.
func BenchmarkUserMessageTags(b *testing.B) {
	for _, c := range []struct {
		unit string
		n    int
	}{{"[d] ", 20000}, {"[m] ", 5000}, {"[rule:x] ", 3000}, {"[plan] ", 5000}} {
		msg := strings.Repeat(c.unit, c.n)
		b.Run(fmt.Sprintf("%q×%d", strings.TrimSpace(c.unit), c.n), func(b *testing.B) {
			e, _ := newEngine(b, Options{Tools: &fakeTools{}, Memory: &recMemory{}, Host: func() HostProfile { h := testHost("", ""); h.ContextBudget = 9999; return h }()})
			ev := Event{Name: UserMessage, Prompt: msg}
			for b.Loop() {
				if _, err := e.Handle(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
