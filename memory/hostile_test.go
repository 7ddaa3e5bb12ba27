package memory

import (
	"context"
	"strings"
	"testing"
	"time"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/state"
)

// memory gc reads the access log through its limit; save never reads a
// memory note over the note limit (a sparse giant) into memory.
func TestMemoryRefusesHostileFiles(t *testing.T) {
	now := time.Date(2026, 4, 16, 8, 0, 0, 0, time.UTC)
	for _, k := range sft.Hostile {
		t.Run(string(k), func(t *testing.T) {
			p := newProject(t, Options{}, now)
			p.write("empirical-a.md", "# a\n")
			sft.Plant(t, p.m.store.L.MemoryAccessPath(), k, state.MaxMemoryAccessBytes, '\n')
			var err error
			sft.Within(t, sft.Deadline, "gc report", func() { _, err = p.m.Report(context.Background()) })
			if !sft.Refused(err) || !strings.Contains(err.Error(), "memory-access.jsonl") {
				t.Errorf("report: %v", err)
			}
		})
	}
	for _, k := range []sft.Kind{sft.Sparse, sft.OverLimit} {
		p := newProject(t, Options{}, now)
		sft.Plant(t, p.mem("empirical-cache-tuning.md"), k, state.MaxNoteBytes, 'x')
		var err error
		sft.Within(t, sft.Deadline, "save", func() {
			_, err = p.m.Save(context.Background(), "empirical", "cache tuning", "the cache is tuned")
		})
		if !sft.Refused(err) || !strings.Contains(err.Error(), "empirical-cache-tuning.md") {
			t.Errorf("save beside a %s note: %v", k, err)
		}
	}
}
