package claude

import (
	"path/filepath"
	"strings"
	"testing"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/state"
)

func TestStatusLineOfHostileState(t *testing.T) {
	for _, k := range sft.Hostile {
		l, err := state.NewLayout(t.TempDir(), "nexus")
		if err != nil {
			t.Fatal(err)
		}
		sft.Plant(t, l.TasksPath(), k, maxStatusFile, ' ')
		sft.Plant(t, l.PlanPath(), k, maxStatusFile, ' ')
		var line string
		sft.Within(t, sft.Deadline, "StatusLine", func() { line = StatusLine(l) })
		if !strings.Contains(line, "plan unreadable") || !strings.Contains(line, "tasks unreadable") {
			t.Errorf("%s: %q", k, line)
		}
	}
}

func TestTranscriptIsNeverAFIFO(t *testing.T) {
	for _, k := range []sft.Kind{sft.FIFO, sft.DevZero, sft.Folder} {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		sft.Plant(t, p, k, 0, 0)
		var ok bool
		sft.Within(t, sft.Deadline, "lastAssistantText", func() { _, ok = lastAssistantText(p) })
		if ok {
			t.Errorf("%s: read as a transcript", k)
		}
	}
}
