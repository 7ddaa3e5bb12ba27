package lifecycle

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/gate"
)

// fakePlugins records the events it is handed and answers a fixed reply.
type fakePlugins struct {
	events []string
	reply  PluginReply
}

func (f *fakePlugins) Dispatch(_ context.Context, ev Event) PluginReply {
	f.events = append(f.events, ev.Name+":"+ev.Tool)
	return f.reply
}

func TestPluginsAfterNexus(t *testing.T) {
	edit := func(agentType string) Event {
		return Event{Name: PreToolUse, AgentID: "a1", AgentType: agentType, Tool: "Edit", ToolInput: map[string]any{"file_path": "x.go"}}
	}
	bash := Event{Name: PreToolUse, AgentID: "a1", AgentType: "engineer", Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf /"}}
	cases := []struct {
		name     string
		ev       Event
		reply    PluginReply
		tasks    bool
		asked    bool
		decision string
		reason   string
		context  string
	}{
		{"nexus's gate denies first; plugins are not asked", edit("architect"), PluginReply{Denied: true, Reason: "plugin says no"}, true, false, "deny", "capability no_file_edit", ""},
		{"a plugin denial becomes the host's deny with its reason", bash, PluginReply{Denied: true, DeniedBy: "guard", Reason: "shellguard: wipes the disk"}, true, true, "deny", "shellguard: wipes the disk", ""},
		{"contexts reach additionalContext", bash, PluginReply{Contexts: []string{"one", "two"}}, true, true, "", "", "one\n\ntwo"},
		{"a gate warning keeps its context first", edit("engineer"), PluginReply{Contexts: []string{"plugin note"}}, false, true, "", "", "nexus warning"},
		{"observed event", Event{Name: SessionEnd}, PluginReply{Denied: true, Contexts: []string{"bye"}}, true, true, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t, "nexus")
			if c.tasks {
				writeJSON(t, s.L.TasksPath(), map[string]any{"goal": "g", "decisions": []any{}, "tasks": []any{}})
			}
			p := &fakePlugins{reply: c.reply}
			e, _ := newEngine(t, Options{Store: s, Plugins: p, Host: testHost("", ""), Gate: gate.Options{UnplannedEdit: "warn"}})
			r := handle(t, e, c.ev)
			if (len(p.events) > 0) != c.asked {
				t.Fatalf("plugins asked: %v", p.events)
			}
			if r.Decision != c.decision || !strings.Contains(r.Reason, c.reason) || !strings.Contains(r.Context, c.context) {
				t.Fatalf("reply %+v", r)
			}
			if c.name == "a gate warning keeps its context first" && !strings.HasSuffix(r.Context, "\n\nplugin note") {
				t.Fatalf("context %q", r.Context)
			}
			if c.decision == "deny" && c.asked {
				log, err := os.ReadFile(s.L.ToolLogPath())
				if err != nil || !strings.Contains(string(log), `"status":"denied"`) || !strings.Contains(string(log), "shellguard") {
					t.Fatalf("tool log %q, %v", log, err)
				}
			}
		})
	}
}

func TestPluginFailuresAreLogged(t *testing.T) {
	s := newStore(t, "nexus")
	p := &fakePlugins{reply: PluginReply{Failures: []string{"plugin slow: no answer within its 200ms timeout; fail-open: the event proceeds"}}}
	e, _ := newEngine(t, Options{Store: s, Plugins: p})
	handle(t, e, Event{Name: SessionStart, Source: "startup"})
	log, err := os.ReadFile(s.L.LogPath())
	if err != nil || !strings.Contains(string(log), `"level":"warn"`) || !strings.Contains(string(log), "plugin slow: no answer") {
		t.Fatalf("nexus.log %q, %v", log, err)
	}
}
