package tools_test

import (
	"context"
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
