//go:build e2e

package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	fa "github.com/nexus-harness/nexus/internal/fakeanthropic"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// waitFor polls until cond holds (30 s at most): each host's Lead waits
// for what the other host's session wrote, so the two sessions overlap
// and the check does not depend on which one is faster.
func waitFor(t *testing.T, what string, cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("waited 30 s for %s", what)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func fileHas(path, s string) func() bool {
	return func() bool {
		b, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(b), s)
	}
}

// readTracker decodes a harness's tracker and checks it against
// nexus-core's agent-tracker schema.
func readTracker(t *testing.T, path string) ([]trackerEntry, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return nil, ""
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	probs, err := schema.NewCoreSet(testenv.CoreDir(t)).Validate(schema.StateTracker, v)
	if err != nil || len(probs) > 0 {
		t.Errorf("%s does not match agent-tracker.schema.json: %v %v", path, probs, err)
	}
	var out []trackerEntry
	json.Unmarshal(b, &out)
	return out, string(b)
}

// TestE2ECodexWithClaudeCode: a Codex session and a Claude Code session at
// the same time in one project, nexus installed for both. Each host's
// tracker (.nexus/state/codex/, .nexus/state/nexus/) holds only its own
// agents and matches the schema; the plan's tasks and the memory are
// shared: each Lead adds a task, waits for the other's and lists both;
// Claude Code's Lead reads the memory Codex's [m] saved.
func TestE2ECodexWithClaudeCode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var proj string
	tasks := func() string { return filepath.Join(proj, ".nexus/state/tasks.json") }
	var codexTracker, claudeTracker []trackerEntry
	var codexRaw, claudeRaw string
	memFile := ""

	codexAPI := fr.New(
		fr.Turn{Name: "warm", When: fr.All(lead, fr.Prompt("e2e: two hosts")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_warm", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "search", When: fr.All(lead, fr.After("c_warm")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "nexus task add list", "limit": 20}}}}},
		fr.Turn{Name: "task", When: fr.All(lead, fr.After("c_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_task", "mcp__nexus", "nx_task_add", map[string]any{"title": "task from codex", "context": "e2e"})}}},
		fr.Turn{Name: "search-spawn", When: fr.All(lead, fr.After("c_task")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search2", Args: map[string]any{"query": "spawn agent wait", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(lead, fr.After("c_search2")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_spawn", ns, "spawn_agent", map[string]any{"agent_type": "engineer", "message": "e2e two hosts engineer: implement"})}}},
		fr.Turn{Name: "eng", When: fr.All(isRole("engineer"), fr.Prompt("e2e two hosts engineer:")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("e_patch", "apply_patch", "*** Begin Patch\n*** Add File: src/codex.go\n+package src\n*** End Patch\n")}}},
		fr.Turn{Name: "eng-done", When: fr.All(isRole("engineer"), fr.After("e_patch")), Reply: fr.Reply{Text: "Implemented."}},
		fr.Turn{Name: "wait", When: fr.All(lead, fr.After("c_spawn")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_wait", ns, "wait_agent", map[string]any{"targets": []string{spawnedID(t, r, "c_spawn")}, "timeout_ms": 90000})}}
		}},
		fr.Turn{Name: "list", When: fr.All(lead, fr.After("c_wait")), Do: func(*fr.ResponsesRequest) fr.Reply {
			waitFor(t, "Claude Code's task", fileHas(tasks(), "task from claude"))
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_list", "mcp__nexus", "nx_task_list", map[string]any{})}}
		}},
		fr.Turn{Name: "final", When: fr.All(lead, fr.After("c_list")), Do: func(*fr.ResponsesRequest) fr.Reply {
			codexTracker, codexRaw = readTracker(t, filepath.Join(proj, ".nexus/state/codex/agent-tracker.json"))
			// Claude Code's session is still on: its tracker must be there.
			waitFor(t, "Claude Code's architect", fileHas(filepath.Join(proj, ".nexus/state/nexus/agent-tracker.json"), "architect"))
			return fr.Reply{Text: "Codex done."}
		}},
	)
	defer codexAPI.Close()

	claudeAPI := fa.New(
		fa.Turn{Name: "lead", When: fa.Prompt("e2e: two hosts claude"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_task", Name: "mcp__nexus__nx_task_add", Input: map[string]any{"title": "task from claude", "context": "e2e"}}}}},
		fa.Turn{Name: "spawn", When: fa.After("toolu_task"), Reply: fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_spawn", Name: "Agent", Input: map[string]any{
			"description": "e2e design", "subagent_type": "architect", "prompt": "e2e two hosts architect: review.",
		}}}}},
		fa.Turn{Name: "arch", When: fa.Prompt("e2e two hosts architect:"), Do: func(*fa.MessagesRequest) fa.Reply {
			// The architect works until Codex's Lead has seen both
			// trackers, so the sessions overlap.
			waitFor(t, "Codex's engineer", fileHas(filepath.Join(proj, ".nexus/state/codex/agent-tracker.json"), "engineer"))
			return fa.Reply{Text: "Reviewed."}
		}},
		fa.Turn{Name: "list", When: fa.After("toolu_spawn"), Do: func(*fa.MessagesRequest) fa.Reply {
			waitFor(t, "Codex's task", fileHas(tasks(), "task from codex"))
			return fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_list", Name: "mcp__nexus__nx_task_list", Input: map[string]any{}}}}
		}},
		fa.Turn{Name: "read", When: fa.After("toolu_list"), Do: func(*fa.MessagesRequest) fa.Reply {
			mem, _ := filepath.Glob(filepath.Join(proj, ".nexus/memory/*.md"))
			if len(mem) == 1 {
				memFile = mem[0]
			}
			return fa.Reply{Tools: []fa.ToolUse{{ID: "toolu_read", Name: "Read", Input: map[string]any{"file_path": memFile}}}}
		}},
		fa.Turn{Name: "final", When: fa.After("toolu_read"), Do: func(*fa.MessagesRequest) fa.Reply {
			claudeTracker, claudeRaw = readTracker(t, filepath.Join(proj, ".nexus/state/nexus/agent-tracker.json"))
			return fa.Reply{Text: "Claude Code done."}
		}},
	)
	defer claudeAPI.Close()

	s := newSession(t, codexAPI, sessionOpts{nexus: true, root: root})
	proj = s.proj
	cs := e2ekit.NewClaudeSession(t, claudeAPI, binDir, e2ekit.ClaudeOpts{Proj: s.proj, Home: s.home})
	t.Run("sessions", func(t *testing.T) {
		t.Run("codex", func(t *testing.T) {
			t.Parallel()
			s.t = t
			s.run("[m] Measured: sqlite busy_timeout of 5s removes SQLITE_BUSY with 8 writers. e2e: two hosts")
		})
		t.Run("claude", func(t *testing.T) {
			t.Parallel()
			// Codex's [m] saves at its first prompt: let it land first.
			waitFor(t, "Codex's memory", func() bool { m, _ := filepath.Glob(filepath.Join(proj, ".nexus/memory/*.md")); return len(m) == 1 })
			cs.T = t
			cs.Run("e2e: two hosts claude")
		})
	})
	s.t = t
	if u := codexAPI.Unused(); len(u) > 0 {
		t.Errorf("Codex: scripted turns never reached: %v", u)
	}
	if u := claudeAPI.Unused(); len(u) > 0 {
		t.Errorf("Claude Code: scripted turns never reached: %v", u)
	}
	if len(codexTracker) != 1 || codexTracker[0].AgentName != "engineer" || codexTracker[0].HarnessID != "codex" ||
		!strings.Contains(strings.Join(codexTracker[0].FilesTouched, " "), "src/codex.go") {
		t.Errorf("Codex's tracker holds %s", codexRaw)
	}
	if len(claudeTracker) != 1 || claudeTracker[0].AgentName != "architect" || claudeTracker[0].HarnessID != "nexus" {
		t.Errorf("Claude Code's tracker holds %s", claudeRaw)
	}
	r, _ := codexAPI.Answered("final")
	if o, _ := r.Responses.Output("c_list"); !hasAll(o.Output.Text(), "task from codex", "task from claude") {
		t.Errorf("Codex's nx_task_list: %q", o.Output.Text())
	}
	m, _ := claudeAPI.Answered("read")
	if res, ok := m.Messages.ToolResult("toolu_list"); !ok || !hasAll(res.Content.Text(), "task from codex", "task from claude") {
		t.Errorf("Claude Code's nx_task_list: %+v", res)
	}
	f, _ := claudeAPI.Answered("final")
	if res, ok := f.Messages.ToolResult("toolu_read"); memFile == "" || !ok || !strings.Contains(res.Content.Text(), "busy_timeout of 5s") {
		t.Errorf("Claude Code's Read of Codex's memory %s: %+v", memFile, res)
	}
	b, err := os.ReadFile(filepath.Join(proj, ".nexus/state/nexus/memory-access.jsonl"))
	if err != nil || !strings.Contains(string(b), filepath.Base(memFile)) {
		t.Errorf("Claude Code's memory read of Codex's memory was not recorded: %q %v", b, err)
	}
}
