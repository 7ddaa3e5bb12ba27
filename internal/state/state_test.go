package state

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/go-json-experiment/json/jsontext"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	l, err := NewLayout(t.TempDir(), "nexus")
	if err != nil {
		t.Fatal(err)
	}
	return New(l, schema.NewCoreSet(testenv.CoreDir(t)))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInvalidWriteLeavesFileUntouched(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	good := &Plan{SchemaVersion: SchemaVersion, ID: 1, Topic: "t", Issues: []Issue{{ID: 1, Title: "a", Status: IssuePending}}, CreatedAt: s.Timestamp()}
	if err := s.Update(ctx, []string{s.L.PlanPath()}, func(tx *Tx) error { return tx.PutPlan(good) }); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.L.PlanPath())
	bad := *good
	bad.Issues = []Issue{{ID: 1, Title: "a", Status: "maybe"}}
	err := s.Update(ctx, []string{s.L.PlanPath(), s.L.TasksPath()}, func(tx *Tx) error {
		if err := tx.PutTasks(&Tasks{Goal: "g"}); err != nil {
			return err
		}
		return tx.PutPlan(&bad)
	})
	var iw *InvalidWriteError
	if !errors.As(err, &iw) || !strings.Contains(err.Error(), "/issues/0/status") {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(s.L.PlanPath())
	if string(before) != string(after) {
		t.Fatal("plan.json changed after a rejected write")
	}
	if Exists(s.L.TasksPath()) {
		t.Fatal("tasks.json written although the transaction was rejected")
	}
}

func TestTasksEmptyGoalTolerated(t *testing.T) {
	s := newStore(t)
	err := s.Update(context.Background(), []string{s.L.TasksPath()}, func(tx *Tx) error {
		return tx.PutTasks(&Tasks{Goal: "", Tasks: []Task{{ID: 1, Title: "t", Context: "c", Status: TaskPending}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.L.TasksPath())
	if !strings.Contains(string(b), `"decisions": []`) || !strings.Contains(string(b), `"deps": []`) {
		t.Fatalf("required arrays missing:\n%s", b)
	}
	if _, _, err := s.ReadTasks(); err != nil {
		t.Fatalf("reading back: %v", err)
	}
}

func TestCorruptFilesAreReportedAndRepaired(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.PlanPath(), "{not json")
	writeFile(t, s.L.TasksPath(), `{"goal":"g","decisions":[],"tasks":[{"id":1}]}`)
	_, _, err := s.ReadPlan()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != s.L.PlanPath() || !strings.Contains(err.Error(), "nexus state repair") {
		t.Fatalf("plan err = %v", err)
	}
	// Reads decode without a schema check; CheckFile (repair, doctor)
	// checks the whole file.
	if _, ok, err := s.ReadTasks(); !ok || err != nil {
		t.Fatalf("tasks read: %v %v", ok, err)
	}
	if _, err := s.CheckFile(s.L.TasksPath()); !errors.As(err, &ce) || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("tasks err = %v", err)
	}
	moved, err := s.Repair(context.Background())
	if err != nil || len(moved) != 2 {
		t.Fatalf("repair moved %v, %v", moved, err)
	}
	for _, m := range moved {
		if Exists(m.Path) || !Exists(m.MovedTo) || !IsCorruptBackup(m.MovedTo) {
			t.Fatalf("bad move %+v", m)
		}
	}
	if _, ok, err := s.ReadPlan(); ok || err != nil {
		t.Fatalf("after repair: %v %v", ok, err)
	}
}

func TestUnknownFieldsSurviveRewrite(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.TrackerPath(), `[{"harness_id":"nexus","started_at":"2026-01-01T00:00:00.000Z","agent_id":"a1"}]`)
	tr, _, err := s.ReadTracker()
	if err != nil {
		t.Fatal(err)
	}
	var e TrackerEntry
	json.Unmarshal([]byte(`{"harness_id":"x","started_at":"s","future_field":{"k":[1,2]}}`), &e)
	if string(e.Extra["future_field"]) != `{"k":[1,2]}` {
		t.Fatalf("extra = %v", e.Extra)
	}
	b, _ := json.Marshal(e)
	if !strings.Contains(string(b), `"future_field":{"k":[1,2]}`) {
		t.Fatalf("marshal lost the unknown field: %s", b)
	}
	if len(tr) != 1 || tr[0].AgentID != "a1" {
		t.Fatalf("tracker = %+v", tr)
	}
}

func TestAppendCycleKeepsLegacyCycles(t *testing.T) {
	s := newStore(t)
	legacy := `{"cycles":[{"completed_at":"2020-01-01T00:00:00Z","branch":"old","plan":{"id":3,"topic":"x & <y>","issues":[],"created_at":"2020-01-01T00:00:00Z"},"tasks":[],"memoryHint":1.50}]}`
	writeFile(t, s.L.HistoryPath(), legacy)
	var total int
	err := s.Update(context.Background(), []string{s.L.HistoryPath()}, func(tx *Tx) (err error) {
		total, err = tx.AppendCycle(Cycle{SchemaVersion: SchemaVersion, CompletedAt: s.Timestamp(), Branch: "main", Plan: jsontext.Value("null"), Tasks: []Task{}})
		return err
	})
	if err != nil || total != 2 {
		t.Fatalf("append: %d %v", total, err)
	}
	b, _ := os.ReadFile(s.L.HistoryPath())
	for _, want := range []string{`"memoryHint": 1.50`, `"topic": "x & <y>"`, `"plan": null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("history lost %s:\n%s", want, b)
		}
	}
	// An invalid new cycle is refused.
	err = s.Update(context.Background(), []string{s.L.HistoryPath()}, func(tx *Tx) error {
		_, err := tx.AppendCycle(Cycle{SchemaVersion: SchemaVersion, CompletedAt: "yesterday", Branch: "", Plan: jsontext.Value("null")})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "/cycles/2/") {
		t.Fatalf("invalid cycle: %v", err)
	}
}

func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				err := s.Update(context.Background(), []string{s.L.TasksPath()}, func(tx *Tx) error {
					ts, ok, err := tx.Tasks()
					if err != nil {
						return err
					}
					if !ok {
						ts = &Tasks{}
					}
					ts.Tasks = append(ts.Tasks, Task{ID: int64(len(ts.Tasks) + 1), Title: "t", Context: "c", Status: TaskPending})
					return tx.PutTasks(ts)
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	ts, _, err := s.ReadTasks()
	if err != nil || len(ts.Tasks) != 80 {
		t.Fatalf("%d tasks, %v", len(ts.Tasks), err)
	}
}

func TestContainedPath(t *testing.T) {
	root := filepath.Join(t.TempDir(), "artifacts")
	outside := t.TempDir()
	os.MkdirAll(root, 0o755)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(root, "outfile"))
	os.MkdirAll(filepath.Join(root, "in"), 0o755)
	os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "inlink"))
	tests := []struct {
		name string
		ok   bool
	}{
		{"a.md", true},
		{"sub/b.md", true},
		{"inlink/c.md", true},
		{"../x", false},
		{"a/../../x", false},
		{"/etc/passwd", false},
		{"out/x", false},
		{"outfile", false},
		{"", false},
		{".", false},
	}
	for _, tt := range tests {
		_, err := ContainedPath(root, tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ContainedPath(%q) err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestAppendLineCutsTornTail(t *testing.T) {
	s := newStore(t)
	p := s.L.ToolLogPath()
	writeFile(t, p, `{"a":1}`+"\n"+`{"b":`)
	if err := s.AppendLine(context.Background(), p, map[string]int{"c": 3}); err != nil {
		t.Fatal(err)
	}
	lines, _ := ReadLines(p)
	if len(lines) != 2 || string(lines[1]) != `{"c":3}` {
		t.Fatalf("lines = %q", lines)
	}
}

func TestEnsureTree(t *testing.T) {
	s := newStore(t)
	ok, err := s.EnsureTree()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	b, _ := os.ReadFile(s.L.GitignorePath())
	if string(b) != GitignoreContent || !Exists(s.L.HarnessDir()) {
		t.Fatalf(".gitignore = %q", b)
	}
	writeFile(t, s.L.GitignorePath(), "memory/\n")
	if ok, _ := s.EnsureTree(); ok {
		t.Fatal("a .gitignore that does not ignore state/ should be reported")
	}
	b, _ = os.ReadFile(s.L.GitignorePath())
	if string(b) != "memory/\n" {
		t.Fatal("existing .gitignore was overwritten")
	}
}

func TestBranch(t *testing.T) {
	dir := t.TempDir()
	if Branch(dir) == "" {
		t.Fatal("empty branch")
	}
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/feature/x\n")
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	if got := Branch(sub); got != "feature/x" {
		t.Fatalf("branch = %q", got)
	}
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	if got := Branch(dir); got != "HEAD" {
		t.Fatalf("detached branch = %q", got)
	}
}

func TestUnknownMembersAreReadAndKept(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.PlanPath(), `{"id":1,"topic":"t","issues":[{"id":1,"title":"a","status":"pending","priority":"high"}],"created_at":"2026-01-01T00:00:00.000Z","owner_team":"core"}`)
	p, ok, err := s.ReadPlan()
	if err != nil || !ok {
		t.Fatalf("a plan with fields from a later minor must be readable: %v", err)
	}
	p.Topic = "t2"
	if err := s.Update(context.Background(), []string{s.L.PlanPath()}, func(tx *Tx) error { return tx.PutPlan(p) }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.L.PlanPath())
	for _, want := range []string{`"owner_team": "core"`, `"priority": "high"`, `"topic": "t2"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("rewrite lost %s:\n%s", want, b)
		}
	}
}
