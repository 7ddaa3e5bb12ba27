package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/state"
)

// The checks that read a project's .nexus/ never hang on a FIFO or read a
// giant: a planted *.lock FIFO is not taken for a lock, a hostile
// .gitignore or state file is reported by name.
func TestChecksOfHostileFiles(t *testing.T) {
	for _, k := range []sft.Kind{sft.FIFO, sft.RelDevZero, sft.Sparse, sft.Folder} {
		t.Run(string(k), func(t *testing.T) {
			l, err := state.NewLayout(t.TempDir(), "nexus")
			if err != nil {
				t.Fatal(err)
			}
			sft.Plant(t, filepath.Join(l.MemoryDir(), "x.lock"), k, 0, 0)
			sft.Plant(t, filepath.Join(l.StateDir(), "plan.json.lock"), k, 0, 0)
			sft.Plant(t, l.GitignorePath(), k, state.MaxGitignoreBytes, 0)
			sft.Plant(t, l.TasksPath(), k, state.MaxTasksBytes, 0)
			var rep *Report
			checks := []Check{Locks{Layout: l, Grace: time.Millisecond}, Gitignore{Layout: l}, Symlinks{Layout: l}, StateFiles{Store: state.New(l, nil)}}
			sft.Within(t, sft.Deadline, "doctor checks", func() { rep = Run(context.Background(), checks, false) })
			var b strings.Builder
			for _, r := range rep.Checks {
				for _, f := range r.Findings {
					b.WriteString(f.Message + "\n")
				}
			}
			all := b.String()
			for _, want := range []string{".gitignore", "tasks.json"} {
				if !strings.Contains(all, want) {
					t.Errorf("no finding names %s:\n%s", want, all)
				}
			}
			if strings.Contains(all, "has been held") {
				t.Errorf("a planted %s was taken for a held lock:\n%s", k, all)
			}
		})
	}
}
