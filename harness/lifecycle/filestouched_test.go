package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

func TestFilesTouched(t *testing.T) {
	s := newStore(t, "nexus")
	ctx := context.Background()
	odd := `a"b<c>&d\é`
	lines := []ToolLogLine{
		{TS: "1", AgentID: "eng1", Tool: "Edit", File: "a.go", Status: StatusOK, Writes: true},
		{TS: "2", AgentID: "eng2", Tool: "Edit", File: "x.go", Status: StatusOK, Writes: true},
		{TS: "3", AgentID: "eng1", Tool: "Read", File: "r.go", Status: StatusOK},
		{TS: "4", AgentID: "eng1", Tool: "Edit", File: "e.go", Status: "error", Writes: true},
		{TS: "5", AgentID: "eng10", Tool: "Edit", File: "other.go", Status: StatusOK, Writes: true},
		{TS: "6", AgentID: "eng1", Tool: "MultiEdit", File: "b.go", Files: []string{"b.go", "a.go", "c.go"}, Status: StatusOK, Writes: true},
		{TS: "7", Tool: "Write", File: "lead.go", Status: StatusOK, Writes: true},
		{TS: "8", AgentID: odd, Tool: "Write", File: "odd.go", Status: StatusOK, Writes: true},
		{TS: "9", AgentID: "eng2", Tool: "Edit", File: `says "agent_id":"eng1"`, Status: StatusOK, Writes: true},
	}
	for _, l := range lines {
		if err := s.AppendLine(ctx, s.L.ToolLogPath(), l); err != nil {
			t.Fatal(err)
		}
	}
	// A torn last line is not part of the log.
	f, _ := os.OpenFile(s.L.ToolLogPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"ts":"10","agent_id":"eng1","tool":"Edit","file":"torn.go","status":"ok","writes":true`)
	f.Close()
	for id, want := range map[string][]string{
		"eng1": {"a.go", "b.go", "c.go"},
		"eng2": {"x.go", `says "agent_id":"eng1"`},
		"":     {"lead.go"},
		odd:    {"odd.go"},
		"none": {},
	} {
		got, err := FilesTouched(s, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("FilesTouched(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
	os.Remove(s.L.ToolLogPath())
	if got, err := FilesTouched(s, "eng1"); err != nil || len(got) != 0 || got == nil {
		t.Errorf("no log: %q, %v", got, err)
	}
}

// BenchmarkFilesTouched: an agent's stop in a session whose tool log has
// 100,000 lines, one in a hundred the agent's.
//
//	go test -run '^$' -bench FilesTouched ./harness/lifecycle/
func BenchmarkFilesTouched(b *testing.B) {
	l, err := state.NewLayout(b.TempDir(), "nexus")
	if err != nil {
		b.Fatal(err)
	}
	s := state.New(l, nil)
	var log strings.Builder
	for i := range 100000 {
		agent := []string{"eng2", "", "arc1", "tst1"}[i%4]
		if i%100 == 7 {
			agent = "eng1"
		}
		fmt.Fprintf(&log, `{"ts":"2026-04-16T08:00:00.000Z","agent_id":"%s","agent":"engineer","tool":"Edit","file":"src/file%d.go","status":"ok","writes":true}`+"\n", agent, i%500)
	}
	os.MkdirAll(filepath.Dir(l.ToolLogPath()), 0o755)
	os.WriteFile(l.ToolLogPath(), []byte(log.String()), 0o644)
	for b.Loop() {
		files, err := FilesTouched(s, "eng1")
		if err != nil || len(files) == 0 {
			b.Fatal(files, err)
		}
	}
}

// BenchmarkHooksLargeState: the events that read tasks.json, on a task
// list of 1,000 tasks (a new engine per call, as every hook process has).
//
//	go test -run '^$' -bench HooksLargeState ./harness/lifecycle/
func BenchmarkHooksLargeState(b *testing.B) {
	c, _ := core(b)
	l, err := state.NewLayout(b.TempDir(), "nexus")
	if err != nil {
		b.Fatal(err)
	}
	var tasks []string
	for i := 1; i <= 1000; i++ {
		tasks = append(tasks, fmt.Sprintf(`{"id":%d,"title":"Implement part %d","context":"The storage layer needs its reader, its writer and tests.","approach":"Reader first.","acceptance":"go test passes","status":"%s","deps":[],"owner":"%s","created_at":"2026-04-16T08:00:00.000Z"}`,
			i, i, []string{"completed", "pending", "in_progress"}[i%3], []string{"engineer", "tester", "writer", "researcher"}[i%4]))
	}
	os.MkdirAll(l.HarnessDir(), 0o755)
	os.WriteFile(l.TasksPath(), []byte(`{"goal":"g","decisions":["d"],"tasks":[`+strings.Join(tasks, ",")+`]}`), 0o644)
	for _, ev := range []Event{
		{Name: UserMessage, Prompt: "[run] carry on"},
		{Name: SubagentSpawn, AgentID: "eng1", AgentType: "nexus:engineer"},
		{Name: SubagentComplete, AgentID: "eng1", AgentType: "nexus:engineer"},
	} {
		b.Run(ev.Name, func(b *testing.B) {
			for b.Loop() {
				e := New(Options{Store: state.New(l, nil), Core: c, ToolPrefix: "nx_"})
				if _, err := e.Handle(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
