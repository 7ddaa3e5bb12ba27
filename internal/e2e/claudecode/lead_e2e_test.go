//go:build e2e

package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// The 11 tools of nexus-core, as Claude Code names MCP tools.
var nexusTools = []string{"nx_plan_start", "nx_plan_status", "nx_plan_update", "nx_plan_decide", "nx_task_add", "nx_task_list", "nx_task_update", "nx_artifact_write", "nx_context", "nx_history_search", "nx_task_close"}

func mcpName(tool string) string { return "mcp__nexus__" + tool }

// chain scripts a Lead that, after the prompt, calls the given tools one
// per turn (each turn answers the previous call's result) and then ends
// with text. Turn i is named after its tool; the ids are "toolu_<name>".
func chain(prompt string, calls []fa.ToolUse, final string) []fa.Turn {
	var turns []fa.Turn
	when := fa.Prompt(prompt)
	for _, c := range calls {
		turns = append(turns, fa.Turn{Name: c.Name, When: when, Reply: fa.Reply{Tools: []fa.ToolUse{c}}})
		when = fa.After(c.ID)
	}
	return append(turns, fa.Turn{Name: "final", When: when, Reply: fa.Reply{Text: final}})
}

func call(name string, input any) fa.ToolUse {
	return fa.ToolUse{ID: "toolu_" + strings.TrimPrefix(name, "mcp__nexus__"), Name: name, Input: input}
}

// TestE2ELeadSession: SessionStart context reaches the model, the 11 tools
// are offered and each call succeeds, a memory file read is recorded, and
// SessionEnd cleans the session's files.
func TestE2ELeadSession(t *testing.T) {
	t.Parallel()
	var proj string
	var during []string
	memFile := func() string { return filepath.Join(proj, ".nexus", "memory", "e2e-note.md") }
	calls := []fa.ToolUse{
		call(mcpName("nx_plan_start"), map[string]any{"topic": "e2e topic", "issues": []string{"Which store?"}, "research_summary": ""}),
		call(mcpName("nx_plan_status"), map[string]any{}),
		call(mcpName("nx_plan_update"), map[string]any{"action": "add", "title": "Second issue"}),
		call(mcpName("nx_plan_decide"), map[string]any{"issue_id": 1, "decision": "Use files"}),
		call(mcpName("nx_task_add"), map[string]any{"title": "Write it", "context": "from the e2e session"}),
		call(mcpName("nx_task_list"), map[string]any{}),
		call(mcpName("nx_task_update"), map[string]any{"id": 1, "status": "completed"}),
		call(mcpName("nx_artifact_write"), map[string]any{"filename": "e2e-report.md", "content": "e2e artifact\n"}),
		call(mcpName("nx_context"), map[string]any{}),
		call(mcpName("nx_history_search"), map[string]any{"query": ""}),
		call(mcpName("nx_task_close"), map[string]any{}),
	}
	turns := chain("e2e: exercise the nexus tools", calls, "All done.")
	// The memory read comes last; its path is only known once the project
	// exists, so the turn computes its reply.
	last := len(turns) - 1
	turns = append(turns[:last], fa.Turn{Name: "Read", When: fa.After("toolu_nx_task_close"), Do: func(*fa.MessagesRequest) fa.Reply {
		return fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_read", Name: "Read", Input: map[string]any{"file_path": memFile()}}}}
	}}, fa.Turn{Name: "final", When: fa.After("toolu_read"), Do: func(*fa.MessagesRequest) fa.Reply {
		// What the session keeps while it runs; SessionEnd must remove it.
		during, _ = filepath.Glob(filepath.Join(proj, ".nexus/state/nexus/*"))
		return fa.Reply{Text: "All done."}
	}})
	api := fa.New(turns...)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	proj = s.Proj
	if err := os.MkdirAll(filepath.Dir(memFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(memFile(), []byte("# e2e note\nRemember the e2e marker.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := s.Run("e2e: exercise the nexus tools")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("the session stopped before these scripted turns: %v", u)
	}
	if st := r.Init().MCP; !slices.Contains(st, mcpStatus{Name: "nexus", Status: "connected"}) {
		t.Errorf("MCP servers at start: %+v, want nexus connected", st)
	}
	starts := r.Hooks("SessionStart")
	if len(starts) == 0 {
		t.Error("Claude Code ran no SessionStart hook")
	}
	for _, h := range starts {
		if h.Outcome != "success" {
			t.Errorf("SessionStart hook %s: outcome %q, output %s", h.HookName, h.Outcome, h.Output)
		}
	}
	first, ok := api.Answered(calls[0].Name)
	if !ok {
		t.Fatal("no request answered the first call")
	}
	for _, tool := range nexusTools {
		if !first.Messages.HasTool(mcpName(tool)) {
			t.Errorf("the model is not offered %s; tools: %v", mcpName(tool), first.Messages.ToolNames())
		}
	}
	// SessionStart's additionalContext is in the first request.
	if got := first.Messages.AllText(); !strings.Contains(got, "nexus is active for this project") {
		t.Errorf("the first request lacks nexus's SessionStart context")
	}
	// Every call came back without error.
	for i, c := range append(calls, fa.ToolUse{ID: "toolu_read", Name: "Read"}) {
		next := "final"
		if i+1 < len(calls) {
			next = calls[i+1].Name
		} else if i+1 == len(calls) {
			next = "Read"
		}
		req, ok := api.Answered(next)
		if !ok {
			t.Fatalf("no request after %s", c.Name)
		}
		res, ok := req.Messages.ToolResult(c.ID)
		if !ok {
			t.Fatalf("the request after %s lacks its result", c.Name)
		}
		if res.IsError {
			t.Errorf("%s failed: %s", c.Name, res.Content.Text())
		}
		if c.Name == "Read" && !strings.Contains(res.Content.Text(), "Remember the e2e marker.") {
			t.Errorf("Read of the memory file returned %q", res.Content.Text())
		}
	}
	// The state the calls left.
	if _, err := os.Stat(filepath.Join(s.Proj, ".nexus/state/artifacts/e2e-report.md")); err != nil {
		t.Errorf("nx_artifact_write: %v", err)
	}
	var history struct {
		Cycles []json.RawMessage `json:"cycles"`
	}
	s.ReadJSON(".nexus/history.json", &history)
	if len(history.Cycles) != 1 {
		t.Errorf("history.json has %d cycles after nx_task_close, want 1", len(history.Cycles))
	}
	// SessionEnd removed the session's files (the tool log) and kept the
	// memory access log.
	for _, f := range []string{"agent-tracker.json", "tool-log.jsonl"} {
		p := filepath.Join(s.Proj, ".nexus/state/nexus", f)
		if !slices.Contains(during, p) {
			t.Errorf("%s was not there during the session (files: %v)", f, during)
		} else if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the session: SessionEnd did not run or did not clean up", f)
		}
	}
	// The memory read is recorded for the Lead.
	b, err := os.ReadFile(filepath.Join(s.Proj, ".nexus/state/nexus/memory-access.jsonl"))
	if err != nil {
		t.Fatalf("memory-access.jsonl: %v", err)
	}
	var rec struct {
		Path        string `json:"path"`
		AccessCount int    `json:"access_count"`
		LastAgent   string `json:"last_agent"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("memory-access.jsonl %q: %v", b, err)
	}
	if rec.AccessCount != 1 || rec.LastAgent != "lead" || filepath.Base(rec.Path) != "e2e-note.md" {
		t.Errorf("memory access record %+v", rec)
	}
}
