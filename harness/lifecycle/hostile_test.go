package lifecycle

import (
	"testing"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/state"
)

// The tool log is streamed through its limit and never read from a FIFO.
func TestFilesTouchedRefusesAHostileToolLog(t *testing.T) {
	for _, k := range sft.Hostile {
		l, err := state.NewLayout(t.TempDir(), "nexus")
		if err != nil {
			t.Fatal(err)
		}
		sft.Plant(t, l.ToolLogPath(), k, state.MaxToolLogBytes, '\n')
		var got []string
		sft.Within(t, sft.Deadline, "FilesTouched", func() { got, err = FilesTouched(state.New(l, nil), "a1") })
		if !sft.Refused(err) || got != nil {
			t.Errorf("%s: %v, %v", k, got, err)
		}
	}
}
