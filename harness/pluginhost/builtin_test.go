package pluginhost

import (
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

func TestSubscribedSkimsOnly(t *testing.T) {
	exe := "/nonexistent/plugin"
	sha := strings.Repeat("a", 64)
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "bash", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 2s, on_failure: fail-open, tools: [Bash]}"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "any", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 500ms, on_failure: fail-closed}"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "start", Exe: exe, SHA: sha, Events: "  session_start: {timeout: 1s, on_failure: fail-open}"})
	// Invalid, but skimming does not validate: its subscription counts, and
	// the full load (in-process or in the server) reports the problem.
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "sloppy", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open}", Extra: "bogus: 1\n"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "off", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open}"})
	o := Options{ProjectDir: project, NoUserPlugins: true, Disabled: []string{"off"}}
	cases := []struct {
		event, tool string
		want        string
		budget      time.Duration
	}{
		{"pre_tool_use", "Bash", "any bash sloppy", 3500 * time.Millisecond},
		{"pre_tool_use", "Read", "any sloppy", 1500 * time.Millisecond},
		{"session_start", "", "start", time.Second},
		{"session_end", "", "", 0},
	}
	for _, c := range cases {
		names, budget := Subscribed(o, c.event, c.tool)
		if got := strings.Join(names, " "); got != c.want || budget != c.budget {
			t.Errorf("%s %s: %q %s, want %q %s", c.event, c.tool, got, budget, c.want, c.budget)
		}
	}
	// No plugin folder at all: nothing, quickly.
	if names, _ := Subscribed(Options{ProjectDir: t.TempDir(), NoUserPlugins: true}, "pre_tool_use", "Bash"); len(names) != 0 {
		t.Fatalf("empty project: %v", names)
	}
	// Built-in subscriptions count.
	bi := &Manifest{Name: "bi", ProtocolVersion: 2, Executable: exe, Events: map[string]Subscription{
		"session_end": {Timeout: Duration(time.Second), OnFailure: FailOpen}}}
	if names, _ := Subscribed(Options{Builtin: []*Manifest{bi}, NoUserPlugins: true}, "session_end", ""); strings.Join(names, " ") != "bi" {
		t.Fatalf("built-in subscriber: %v", names)
	}
}

func TestLookupToolWithoutStarting(t *testing.T) {
	exe := "/nonexistent/plugin"
	sha := strings.Repeat("a", 64)
	project := t.TempDir()
	user := t.TempDir()
	dir := ProjectPluginDir(project)
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "edit", Exe: exe, SHA: sha, Tools: "\n  - {name: apply, capability_classes: [file_modification]}"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "broken", Exe: exe, SHA: sha, Extra: "bogus: 1\n"})
	plugintest.WriteManifest(t, user, plugintest.Spec{Name: "edit", Exe: exe, SHA: sha, Tools: "\n  - {name: other, capability_classes: []}"}) // shadowed
	bi := &Manifest{Name: "bi", ProtocolVersion: 2, Executable: exe, BareToolNames: true,
		Tools: []ToolDecl{{Name: "check_thing", CapabilityClasses: []string{"shell_command_exec"}}}}
	o := Options{ProjectDir: project, UserDir: user, Builtin: []*Manifest{bi}}
	cases := []struct {
		name, plugin string
		classes      string
		ok           bool
	}{
		{"edit_apply", "edit", "file_modification", true},
		{"edit_other", "", "", false}, // the user plugin is shadowed by the project's
		{"check_thing", "bi", "shell_command_exec", true},
		{"broken_echo", "", "", false},
		{"nounderscore", "", "", false},
		{"missing_tool", "", "", false},
	}
	for _, c := range cases {
		ref, ok := LookupTool(o, c.name)
		if ok != c.ok || ref.Plugin != c.plugin || strings.Join(ref.CapabilityClasses, ",") != c.classes {
			t.Errorf("LookupTool(%s) = %+v, %v", c.name, ref, ok)
		}
	}
	if _, ok := LookupTool(Options{ProjectDir: project, UserDir: user, Disabled: []string{"edit"}}, "edit_apply"); ok {
		t.Error("a disabled plugin's tool was found")
	}
}
