//go:build e2e

package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// TestE2EMemoryReadBySubagent: a memory file read inside a researcher is
// recorded for that agent, not for the Lead.
func TestE2EMemoryReadBySubagent(t *testing.T) {
	t.Parallel()
	var proj string
	var snap snapshot
	api := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: research"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e research", "subagent_type": "researcher", "prompt": "e2e memory researcher: read the note.",
		}}}}},
		fa.Turn{Name: "read", When: fa.Prompt("e2e memory researcher:"), Do: func(*fa.MessagesRequest) fa.Reply {
			return fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_read", Name: "Read", Input: map[string]any{"file_path": filepath.Join(proj, ".nexus/memory/e2e-note.md")}}}}
		}},
		fa.Turn{Name: "researched", When: fa.After("toolu_read"), Reply: fa.Reply{Text: "Read it."}},
		fa.Turn{Name: "lead-final", When: fa.After("toolu_spawn"), Do: func(*fa.MessagesRequest) fa.Reply {
			snap.take(proj)
			return fa.Reply{Text: "Done."}
		}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	proj = s.Proj
	if err := os.MkdirAll(filepath.Join(proj, ".nexus/memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".nexus/memory/e2e-note.md"), []byte("# note\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s.Run("e2e: research")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	b, err := os.ReadFile(filepath.Join(proj, ".nexus/state/nexus/memory-access.jsonl"))
	if err != nil {
		t.Fatalf("memory-access.jsonl: %v", err)
	}
	var rec struct {
		AccessCount int    `json:"access_count"`
		LastAgent   string `json:"last_agent"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("memory-access.jsonl %q: %v", b, err)
	}
	i := slices.IndexFunc(snap.tracker, func(e trackerEntry) bool { return e.AgentName == "researcher" })
	if i < 0 {
		t.Fatalf("no researcher in agent-tracker.json: %s", snap.raw)
	}
	// last_agent is the reading agent's id: the instance id nexus tracks.
	if rec.AccessCount != 1 || rec.LastAgent != snap.tracker[i].AgentID {
		t.Errorf("memory access record %+v: want one read by the researcher (%s)", rec, snap.tracker[i].AgentID)
	}
}
