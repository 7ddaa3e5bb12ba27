//go:build e2e

package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// The nine roles of nexus-core 0.10.0.
var roles = []string{"architect", "designer", "engineer", "postdoc", "researcher", "reviewer", "strategist", "tester", "writer"}

type trackerEntry struct {
	AgentName string `json:"agent_name"`
	AgentID   string `json:"agent_id"`
	Status    string `json:"status"`
}

// snapshot keeps what a turn saw on disk while the session ran (SessionEnd
// deletes the tracker afterwards).
type snapshot struct {
	mu      sync.Mutex
	tracker []trackerEntry
	raw     string
}

func (s *snapshot) take(proj string) {
	b, err := os.ReadFile(filepath.Join(proj, ".nexus/state/nexus/agent-tracker.json"))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = fmt.Sprintf("%s (%v)", b, err)
	s.tracker = nil
	json.Unmarshal(b, &s.tracker)
}

// TestE2ERoles: each of the nine roles is offered to the Lead, spawned by
// its bare id through the Agent tool, briefed, and tracked under its name.
func TestE2ERoles(t *testing.T) {
	t.Parallel()
	var proj string
	var snap snapshot
	var spawns []fa.ToolUse
	var turns []fa.Turn
	for _, role := range roles {
		id := "toolu_spawn_" + role
		spawns = append(spawns, fa.ToolUse{ID: id, Name: "Agent", Input: map[string]any{
			"description": "e2e " + role, "subagent_type": role, "prompt": "e2e role " + role + ": report your role.",
		}})
		turns = append(turns, fa.Turn{Name: "sub-" + role, When: fa.Prompt("e2e role " + role + ":"), Reply: fa.Reply{Text: "Role " + role + " reporting."}})
	}
	turns = append(turns,
		fa.Turn{Name: "lead-spawn", When: fa.Prompt("e2e: spawn every role"), Reply: fa.Reply{Tools: spawns}},
		fa.Turn{Name: "lead-final", When: fa.After(spawns[len(spawns)-1].ID), Do: func(*fa.MessagesRequest) fa.Reply {
			snap.take(proj)
			return fa.Reply{Text: "Every role reported."}
		}},
	)
	api := fa.New(turns...)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	proj = s.Proj

	s.Run("e2e: spawn every role")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v (tracker at the end: %s)", u, snap.raw)
	}
	lead, _ := api.Answered("lead-spawn")
	agents := lead.Messages.AllText()
	final, _ := api.Answered("lead-final")
	for i, role := range roles {
		if !strings.Contains(agents, "- "+role+":") {
			t.Errorf("the Lead is not offered the agent type %q", role)
		}
		res, ok := final.Messages.ToolResult(spawns[i].ID)
		if !ok || res.IsError || !strings.Contains(res.Content.Text(), "Role "+role+" reporting.") {
			t.Errorf("spawn of %s: error=%v result %q", role, res.IsError, res.Content.Text())
		}
		sub, _ := api.Answered("sub-" + role)
		if sub != nil && !strings.Contains(sub.Messages.SystemText(), "## Role") {
			t.Errorf("%s runs without its role body in the system prompt", role)
		}
		// nexus's SubagentStart briefing reaches the subagent.
		if sub != nil && !strings.Contains(sub.Messages.AllText(), "nexus: you are the "+role+" agent") {
			t.Errorf("%s did not get nexus's SubagentStart briefing", role)
		}
		if !slices.ContainsFunc(snap.tracker, func(e trackerEntry) bool { return e.AgentName == role && e.AgentID != "" }) {
			t.Errorf("agent-tracker.json has no entry for %s: %s", role, snap.raw)
		}
	}
	for _, e := range snap.tracker {
		if !slices.Contains(roles, e.AgentName) {
			t.Errorf("agent-tracker.json tracks an agent that is not a role: %+v", e)
		}
	}
}

// TestE2EGateInSubagent: an architect may not edit files. Write is hidden
// from it (disallowedTools); a file write through Bash reaches nexus's gate,
// which denies it, and the denial reaches the architect's own conversation,
// not the Lead's.
func TestE2EGateInSubagent(t *testing.T) {
	t.Parallel()
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: ask the architect"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e design", "subagent_type": "architect", "prompt": "e2e architect: write the design into design.md.",
		}}}}},
		fa.Turn{Name: "arch-write", When: fa.Prompt("e2e architect:"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_arch_write", Name: "Write", Input: map[string]any{"file_path": "design.md", "content": "design\n"}}}}},
		fa.Turn{Name: "arch-bash", When: fa.After("toolu_arch_write"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_arch_bash", Name: "Bash", Input: map[string]any{"command": "echo design > design.md", "description": "write the design"}}}}},
		fa.Turn{Name: "arch-done", When: fa.After("toolu_arch_bash"), Reply: fa.Reply{Text: "I could not write design.md."}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_spawn"), Reply: fa.Reply{Text: "The architect reported."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})

	s.Run("e2e: ask the architect")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	if _, err := os.Stat(filepath.Join(s.Proj, "design.md")); err == nil {
		t.Error("the architect wrote design.md")
	}
	first, _ := api.Answered("arch-write")
	if first.Messages.HasTool("Write") {
		t.Error("the architect is offered Write, which its capabilities forbid")
	}
	req, _ := api.Answered("arch-bash")
	if res, ok := req.Messages.ToolResult("toolu_arch_write"); !ok || !res.IsError {
		t.Errorf("Write inside the architect: %+v", res)
	}
	req, _ = api.Answered("arch-done")
	res, ok := req.Messages.ToolResult("toolu_arch_bash")
	if !ok || !res.IsError || !strings.Contains(strings.ToLower(res.Content.Text()), "nexus") {
		t.Errorf("the architect did not get nexus's denial of its Bash write: error=%v %q", res.IsError, res.Content.Text())
	}
	t.Logf("denial the architect got: %s", res.Content.Text())
	lead, _ := api.Answered("lead-final")
	if strings.Contains(lead.Messages.AllText(), res.Content.Text()) {
		t.Error("the denial reached the Lead's conversation as well")
	}
}

// TestE2EUnplannedEdit: the Lead's Write is denied while no task cycle is
// open (gate.unplanned_edit deny, the default) with nexus's reason in the
// tool result, and allowed once a task is registered.
func TestE2EUnplannedEdit(t *testing.T) {
	t.Parallel()
	api := fa.New(
		fa.Turn{Name: "write-1", When: fa.Prompt("e2e: unplanned"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_write_1", Name: "Write", Input: map[string]any{"file_path": "notes.md", "content": "first\n"}}}}},
		fa.Turn{Name: "task", When: fa.After("toolu_write_1"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_task", Name: mcpName("nx_task_add"), Input: map[string]any{"title": "Write notes", "context": "e2e"}}}}},
		fa.Turn{Name: "write-2", When: fa.After("toolu_task"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_write_2", Name: "Write", Input: map[string]any{"file_path": "notes.md", "content": "planned\n"}}}}},
		fa.Turn{Name: "final", When: fa.After("toolu_write_2"), Reply: fa.Reply{Text: "Written."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})

	s.Run("e2e: unplanned")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	req, _ := api.Answered("task")
	if res, ok := req.Messages.ToolResult("toolu_write_1"); !ok || !res.IsError || !strings.Contains(res.Content.Text(), "nexus denied") {
		t.Errorf("the unplanned Write was not denied by nexus: error=%v %q", res.IsError, res.Content.Text())
	}
	req, _ = api.Answered("final")
	if res, ok := req.Messages.ToolResult("toolu_write_2"); !ok || res.IsError {
		t.Errorf("the Write after nx_task_add failed: %q", res.Content.Text())
	}
	b, err := os.ReadFile(filepath.Join(s.Proj, "notes.md"))
	if err != nil || string(b) != "planned\n" {
		t.Errorf("notes.md = %q, %v; want the planned write only", b, err)
	}
}
