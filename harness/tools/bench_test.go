package tools_test

import (
	"context"
	"fmt"
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

func writeLargeState(b *testing.B, proj string, n int) {
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
