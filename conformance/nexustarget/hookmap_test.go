package nexustarget

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/host/neutral"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// The payloads the conformance runner sends a hook command
// (conformance.HookPayloads) are what nexus's own adapters read back as the
// fixture's event: the mapping is the adapters' inverse.
func TestHookPayloadsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := conformance.Project{Dir: dir, NexusDir: filepath.Join(dir, ".nexus"), HarnessID: "claude-nexus"}
	msg := "Implementation complete"
	type want struct {
		name, agentID, role string
		tool, file          string
		lastMessage         *string
		files               []string
	}
	for _, tc := range []struct {
		protocol, typ string
		params        map[string]any
		want          []want
	}{
		{conformance.HookClaude, conformance.EventAgentSpawn, map[string]any{"harness_id": "claude-nexus", "agent_name": "architect", "agent_id": "u1"},
			[]want{{name: lifecycle.SubagentSpawn, agentID: "u1", role: "architect"}}},
		{conformance.HookClaude, conformance.EventAgentComplete, map[string]any{"agent_id": "u1", "last_message": msg, "files_touched": []any{"src/foo.ts"}},
			[]want{{name: lifecycle.PostToolUse, agentID: "u1", tool: "Write", file: filepath.Join(dir, "src", "foo.ts")}, {name: lifecycle.SubagentComplete, agentID: "u1", lastMessage: &msg}}},
		{conformance.HookClaude, conformance.EventAgentResume, map[string]any{"agent_id": "u1"},
			[]want{{name: lifecycle.SubagentSpawn, agentID: "u1"}}},
		{conformance.HookNeutral, conformance.EventAgentSpawn, map[string]any{"agent_name": "architect", "agent_id": "u1"},
			[]want{{name: lifecycle.SubagentSpawn, agentID: "u1", role: "architect"}}},
		{conformance.HookNeutral, conformance.EventAgentComplete, map[string]any{"agent_id": "u1", "last_message": msg, "files_touched": []any{"src/foo.ts"}},
			[]want{{name: lifecycle.SubagentComplete, agentID: "u1", lastMessage: &msg, files: []string{"src/foo.ts"}}}},
		{conformance.HookNeutral, conformance.EventAgentResume, map[string]any{"agent_id": "u1"},
			[]want{{name: lifecycle.SubagentResume, agentID: "u1"}}},
	} {
		payloads, err := conformance.HookPayloads(tc.protocol, p, tc.typ, tc.params)
		if err != nil || len(payloads) != len(tc.want) {
			t.Fatalf("%s %s: %d payloads, %v", tc.protocol, tc.typ, len(payloads), err)
		}
		for i, pl := range payloads {
			data, _ := json.Marshal(pl.Body)
			var ev lifecycle.Event
			if tc.protocol == conformance.HookClaude {
				_, ev, err = claude.Decode(data, "")
			} else {
				_, ev, err = neutral.Decode(data, "")
			}
			if err != nil {
				t.Fatalf("%s %s payload %d: nexus's adapter refuses it: %v\n%s", tc.protocol, tc.typ, i, err, data)
			}
			w := tc.want[i]
			file, _ := ev.ToolInput["file_path"].(string)
			if ev.Name != w.name || ev.AgentID != w.agentID || ev.Dir != dir || (w.role != "" && lifecycle.BareRole(ev.AgentType) != w.role) ||
				ev.Tool != w.tool || file != w.file || !reflect.DeepEqual(ev.LastMessage, w.lastMessage) || !reflect.DeepEqual(ev.FilesTouched, w.files) {
				t.Errorf("%s %s payload %d decodes to %+v, want %+v", tc.protocol, tc.typ, i, ev, w)
			}
		}
	}
}
