package tools_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCallTool measures Engine.CallTool in-process (argument check,
// state read, schema check, atomic write with fsync for the writing tools):
// the part of an MCP round trip that is nexus's own work.
//
//	go test -run '^$' -bench CallTool ./harness/tools/
func BenchmarkCallTool(b *testing.B) {
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"context", nil},
		{"plan_status", nil},
		{"task_list", nil},
		{"history_search", map[string]any{"query": "bench"}},
		{"task_update", map[string]any{"id": "1", "status": "in_progress"}},
		{"plan_decide", map[string]any{"issue_id": 1, "decision": "d"}},
		{"artifact_write", map[string]any{"filename": "bench.md", "content": "# bench\n"}},
	}
	for _, bc := range cases {
		b.Run(bc.tool, func(b *testing.B) {
			e, _ := newEngine(b)
			ctx := context.Background()
			for _, setup := range []struct {
				tool string
				args map[string]any
			}{
				{"plan_start", map[string]any{"topic": "bench", "issues": []any{"a", "b"}, "research_summary": "r"}},
				{"task_add", map[string]any{"title": "a", "context": "c"}},
				{"task_add", map[string]any{"title": "b", "context": "c", "deps": []any{1}}},
			} {
				if _, err := e.CallTool(ctx, setup.tool, setup.args); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.CallTool(ctx, bc.tool, bc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLargeState measures the calls agents make most on a project
// with n tasks in tasks.json and n cycles in history.json, in one engine
// (as nexus mcp serves them), results encoded as the MCP server sends
// them (Engine.CallToolJSON).
//
//	go test -run '^$' -bench LargeState -benchtime 20x ./harness/tools/
func BenchmarkLargeState(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, bc := range []struct {
			tool string
			args map[string]any
		}{
			{"task_list", nil},
			{"task_add", map[string]any{"title": "bench", "context": "c"}},
			{"history_search", map[string]any{"query": "auth"}},
			{"context", nil},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", bc.tool, n), func(b *testing.B) {
				e, proj := newEngine(b)
				writeLargeState(b, proj, n)
				ctx := context.Background()
				for b.Loop() {
					if _, err := e.CallToolJSON(ctx, bc.tool, bc.args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func writeLargeState(b testing.TB, proj string, n int) {
	b.Helper()
	tasks := make([]any, n)
	for i := range tasks {
		tasks[i] = map[string]any{"id": i + 1, "title": fmt.Sprintf("Implement part %d of the storage layer", i+1),
			"context":  "The storage layer needs its reader, its writer and tests; see the plan for the decision taken and why.",
			"approach": "Write the reader first, then the writer.", "status": []string{"pending", "completed"}[i%2],
			"deps": []any{}, "owner": "engineer", "created_at": "2026-01-01T00:00:00.000Z"}
	}
	cycles := make([]any, n)
	for i := range cycles {
		topic := fmt.Sprintf("Cycle %d: storage", i)
		if i%10 == 3 {
			topic = fmt.Sprintf("Cycle %d: auth tokens", i)
		}
		cycles[i] = map[string]any{"schema_version": "0.5", "completed_at": "2026-01-01T00:00:00.000Z", "branch": "main",
			"plan": map[string]any{"id": i + 1, "topic": topic, "created_at": "2026-01-01T00:00:00.000Z", "issues": []any{
				map[string]any{"id": 1, "title": "Format", "status": "decided", "decision": "JSON"}}},
			"tasks": tasks[:3]}
	}
	putFiles(b, proj, files{tasksPath: map[string]any{"goal": "g", "decisions": []any{"d"}, "tasks": tasks},
		historyPath: map[string]any{"schema_version": "0.5", "cycles": cycles}})
}

// BenchmarkForeignWrite is BenchmarkLargeState when another process
// rewrote tasks.json since the last call (one task's status changed, the
// file rewritten whole in the format every harness writes, new inode) or
// appended a cycle to history.json: what a call costs after a hook, a
// second session or another harness touched the file.
//
//	go test -run '^$' -bench ForeignWrite -benchtime 20x ./harness/tools/
func BenchmarkForeignWrite(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, bc := range []struct {
			tool, file string
			args       map[string]any
		}{
			{"task_add", tasksPath, map[string]any{"title": "bench", "context": "c"}},
			{"task_update", tasksPath, map[string]any{"id": 2, "status": "in_progress"}},
			{"task_list", tasksPath, nil},
			{"history_search", historyPath, map[string]any{"query": "auth"}},
			{"context", historyPath, nil},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", bc.tool, n), func(b *testing.B) {
				e, proj := newEngine(b)
				writeLargeState(b, proj, n)
				ctx := context.Background()
				if _, err := e.CallToolJSON(ctx, bc.tool, bc.args); err != nil {
					b.Fatal(err)
				}
				round := 0
				for b.Loop() {
					b.StopTimer()
					round++
					if bc.file == tasksPath {
						touchTask(b, filepath.Join(proj, tasksPath), round)
					} else {
						appendCycle(b, filepath.Join(proj, historyPath), round)
					}
					b.StartTimer()
					if _, err := e.CallToolJSON(ctx, bc.tool, bc.args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// touchTask rewrites tasks.json as another harness would: read, the
// status of one task changed (the (round mod n)-th), written whole to a
// new file renamed over the old one. The rest keeps its bytes, as it
// does when a harness that writes JSON.stringify(v, null, 2) (nexus, the
// Node harness) rewrites a file it read.
func touchTask(b testing.TB, path string, round int) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	key := []byte(`"status": "`)
	n := bytes.Count(data, key)
	if n == 0 {
		b.Fatalf("%s: no task", path)
	}
	at := 0
	for range round%n + 1 {
		at += bytes.Index(data[at:], key) + len(key)
	}
	end := at + bytes.IndexByte(data[at:], '"')
	status := []string{"pending", "in_progress", "completed"}[round%3]
	if string(data[at:end]) == status {
		status = "pending"
		if string(data[at:end]) == status {
			status = "completed"
		}
	}
	out := append(append(append([]byte(nil), data[:at]...), status...), data[end:]...)
	writeDurably(b, path, out)
}

// appendCycle appends a cycle to history.json as another harness would
// (the file read and written whole, new inode).
func appendCycle(b testing.TB, path string, round int) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	end := bytes.LastIndex(data, []byte("\n  ]"))
	if end < 0 {
		b.Fatalf("%s: no cycles array", path)
	}
	cycle := fmt.Sprintf(`,
    {
      "schema_version": "0.5",
      "completed_at": "2026-02-01T00:00:00.000Z",
      "branch": "main",
      "plan": null,
      "tasks": [],
      "note": "appended by another process, round %d"
    }`, round)
	out := append(append(append([]byte(nil), data[:end]...), cycle...), data[end:]...)
	writeDurably(b, path, out)
}

// writeDurably is writeOver with the new file fsynced before the rename:
// the other process pays for its own durability (unsynced, the next fsync
// of the engine's own write would write its data out; see
// scripts/benchtable's changeAsAnotherProcess).
func writeDurably(b testing.TB, path string, data []byte) {
	b.Helper()
	tmp := path + ".other"
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
}

func writeOver(b testing.TB, path string, data []byte) {
	b.Helper()
	tmp := path + ".other"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
}
