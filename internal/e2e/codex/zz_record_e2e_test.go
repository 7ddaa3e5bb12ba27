//go:build e2e

package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// Throwaway: records the hook payloads of a Codex session into
// $RECORD_DIR (not committed).
func TestRecordSession(t *testing.T) {
	dir := os.Getenv("RECORD_DIR")
	if dir == "" {
		t.Skip("RECORD_DIR")
	}
	arch, eng := fr.DeveloperHas("ARCHITECT-BODY"), fr.DeveloperHas("ENGINEER-BODY")
	ld := fr.All(fr.Not(arch), fr.Not(eng))
	var engID string
	api := fr.New(
		fr.Turn{Name: "warm", When: fr.All(ld, fr.Prompt("[plan] cache")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_warm", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "search", When: fr.All(ld, fr.After("c_warm")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "nexus task add spawn agent wait send", "limit": 20}}}}},
		fr.Turn{Name: "task", When: fr.All(ld, fr.After("c_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_task", "mcp__nexus", "nx_task_add", map[string]any{"title": "cache the API responses", "context": "the API is slow", "acceptance": "responses are cached"})}}},
		fr.Turn{Name: "search2", When: fr.All(ld, fr.After("c_task")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search2", Args: map[string]any{"query": "spawn agent wait send input", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(ld, fr.After("c_search2")), Reply: fr.Reply{Calls: []fr.Call{
			fr.NamespacedFunction("c_sa", ns, "spawn_agent", map[string]any{"agent_type": "architect", "message": "Design the cache."}),
		}}},
		fr.Turn{Name: "spawn2", When: fr.All(ld, fr.After("c_sa")), Reply: fr.Reply{Calls: []fr.Call{
			fr.NamespacedFunction("c_se", ns, "spawn_agent", map[string]any{"agent_type": "engineer", "message": "Implement the cache."}),
		}}},
		fr.Turn{Name: "a1", When: fr.All(arch, fr.Prompt("Design the cache.")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("a_mem", "exec_command", map[string]any{"cmd": "cat .nexus/memory/pattern-http-caching.md"})}}},
		fr.Turn{Name: "a2", When: fr.All(arch, fr.After("a_mem")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("a_patch", "apply_patch", "*** Begin Patch\n*** Add File: docs/cache-design.md\n+# Cache design\n*** End Patch\n")}}},
		fr.Turn{Name: "a3", When: fr.All(arch, fr.After("a_patch")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("a_sh", "exec_command", map[string]any{"cmd": "echo notes > docs/notes.md"})}}},
		fr.Turn{Name: "a4", When: fr.All(arch, fr.After("a_sh")), Reply: fr.Reply{Text: "Design: an LRU in front of the client."}},
		fr.Turn{Name: "e1", When: fr.All(eng, fr.Prompt("Implement the cache.")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("e_patch", "apply_patch", "*** Begin Patch\n*** Add File: src/cache.go\n+package src\n*** End Patch\n")}}},
		fr.Turn{Name: "e2", When: fr.All(eng, fr.After("e_patch")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("e_hd", "exec_command", map[string]any{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/lru.go\n+package src\n*** End Patch\nEOF\n"})}}},
		fr.Turn{Name: "e3", When: fr.All(eng, fr.After("e_hd")), Reply: fr.Reply{Text: "Implemented src/cache.go and src/lru.go."}},
		fr.Turn{Name: "wait1", When: fr.All(ld, fr.After("c_se")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			engID = spawnedID(t, r, "c_se")
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_w1", ns, "wait_agent", map[string]any{"targets": []string{spawnedID(t, r, "c_sa"), engID}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "wait1b", When: fr.All(ld, fr.After("c_w1")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_w1b", ns, "wait_agent", map[string]any{"targets": []string{spawnedID(t, r, "c_sa"), engID}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "send", When: fr.All(ld, fr.After("c_w1b")), Do: func(*fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_send", ns, "send_input", map[string]any{"target": engID, "message": "Add a test."})}}
		}},
		fr.Turn{Name: "e4", When: fr.All(eng, fr.Prompt("Add a test.")), Reply: fr.Reply{Text: "Test added."}},
		fr.Turn{Name: "wait2", When: fr.All(ld, fr.After("c_send")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_w2", ns, "wait_agent", map[string]any{"targets": []string{engID}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "fin", When: fr.All(ld, fr.After("c_w2")), Reply: fr.Reply{Text: "Cache done."}},
	)
	defer api.Close()
	agent := func(name, body string) string {
		return fmt.Sprintf("name = %q\ndescription = \"e2e\"\ndeveloper_instructions = %q\n", name, body)
	}
	s := newSession(t, api, sessionOpts{hooks: true, mcp: true, agents: map[string]string{"architect": agent("architect", "ARCHITECT-BODY"), "engineer": agent("engineer", "ENGINEER-BODY")}})
	os.MkdirAll(filepath.Join(s.proj, ".nexus/memory"), 0o755)
	os.WriteFile(filepath.Join(s.proj, ".nexus/memory/pattern-http-caching.md"), []byte("# HTTP caching\n"), 0o644)
	_ = engID
	s.run("[plan] cache the API responses")
	t.Logf("unused %v", api.Unused())
	os.MkdirAll(dir, 0o755)
	for i, h := range s.hooks() {
		b, _ := json.MarshalIndent(h.Payload, "", "  ")
		txt := strings.ReplaceAll(string(b), s.proj, "{{PROJECT}}")
		txt = strings.ReplaceAll(txt, s.home, "/home/dev")
		who := "lead"
		if at, _ := h.Payload["agent_type"].(string); at != "" {
			who = at
		}
		tool, _ := h.Payload["tool_name"].(string)
		name := fmt.Sprintf("%02d-%s-%s", i+1, h.Event, who)
		if tool != "" {
			name += "-" + strings.TrimPrefix(strings.TrimPrefix(tool, "mcp__nexus__"), "multi_agent_v1")
		}
		os.WriteFile(filepath.Join(dir, name+".json"), []byte(txt+"\n"), 0o644)
	}
}
