package pluginhost

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// builtinTP is a built-in manifest running the test plugin, with its tools
// exposed under their own names.
func builtinTP(t testing.TB, name string) *Manifest {
	return &Manifest{Name: name, ProtocolVersion: 2, Executable: testPluginBinary(t), BareToolNames: true,
		Tools: []ToolDecl{{Name: "pid", CapabilityClasses: []string{}}, {Name: "echo", CapabilityClasses: []string{"file_modification"}}}}
}

func TestBuiltinBareNamesShadowingAndDisabled(t *testing.T) {
	exe := testPluginBinary(t)
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	// A project plugin named like the built-in one is shadowed (and
	// reported); a disabled one is skipped silently.
	writeManifest(t, dir, spec{name: "store", exe: exe})
	writeManifest(t, dir, spec{name: "other", exe: exe})
	writeManifest(t, dir, spec{name: "off", exe: exe})
	m, err := Open(Options{ProjectDir: project, NoUserPlugins: true, Logger: testLogger(t),
		Builtin: []*Manifest{builtinTP(t, "store")}, Disabled: []string{"off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var names []string
	for _, p := range m.List() {
		names = append(names, p.Name+"@"+string(p.Source))
	}
	if got := strings.Join(names, " "); got != "other@project store@builtin" {
		t.Fatalf("plugins %q", got)
	}
	if len(m.Problems()) != 1 || !strings.Contains(m.Problems()[0].Error(), "shadowed by nexus's built-in plugin") {
		t.Fatalf("problems %v", m.Problems())
	}
	ref, ok := m.Resolve("pid")
	if !ok || ref.Plugin != "store" || ref.Name != "pid" {
		t.Fatalf("Resolve(pid) = %+v, %v", ref, ok)
	}
	if _, ok := m.Resolve("store_pid"); ok {
		t.Fatal("a bare-named tool is also exposed with its plugin prefix")
	}
	if _, ok := m.Resolve("other_pid"); !ok {
		t.Fatal("the discovered plugin's tool is not exposed as other_pid")
	}
	if pid := callPID(t, m, "pid"); pid <= 0 {
		t.Fatal("no pid")
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var exposed []string
	for _, tl := range tools {
		exposed = append(exposed, tl.Name)
	}
	if !slices.Contains(exposed, "echo") || !slices.Contains(exposed, "other_echo") || slices.Contains(exposed, "off_echo") {
		t.Fatalf("tools %v", exposed)
	}
	if st := m.List()[1]; st.Name != "store" || strings.Join(st.Tools, ",") != "pid,echo" {
		t.Fatalf("list entry %+v", st)
	}

	// Disabling the built-in lets nothing take its place.
	m2, err := Open(Options{ProjectDir: project, NoUserPlugins: true, Logger: testLogger(t),
		Builtin: []*Manifest{builtinTP(t, "store")}, Disabled: []string{"store"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, ok := m2.Resolve("pid"); ok {
		t.Fatal("a disabled built-in plugin's tool is exposed")
	}
	if _, ok := m2.Resolve("store_pid"); ok {
		t.Fatal("the project plugin a disabled built-in shadowed is loaded")
	}
}

func TestBareNameCollisionKeepsTheFirst(t *testing.T) {
	exe := testPluginBinary(t)
	// The built-in exposes the bare name "echo_text"; the plugin "echo"
	// declares a tool "text", which would be exposed under the same name.
	bi := &Manifest{Name: "bi", ProtocolVersion: 2, Executable: exe, BareToolNames: true,
		Tools: []ToolDecl{{Name: "echo_text", CapabilityClasses: []string{}}}}
	man, err := LoadManifest(writeManifest(t, t.TempDir(), spec{name: "echo", exe: exe, tools: "\n  - {name: text, capability_classes: []}"}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New([]*Manifest{bi, man}, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ref, _ := m.Resolve("echo_text"); ref.Plugin != "bi" {
		t.Fatalf("echo_text belongs to %q, want the built-in", ref.Plugin)
	}
	if len(m.Problems()) != 1 || !strings.Contains(m.Problems()[0].Error(), `tool "echo_text" is not exposed`) {
		t.Fatalf("problems %v", m.Problems())
	}
	if got := len(m.DeclaredTools()); got != 1 {
		t.Fatalf("%d declared tools, want 1", got)
	}
}

func TestSubscribedSkimsOnly(t *testing.T) {
	exe := "/nonexistent/plugin"
	sha := strings.Repeat("a", 64)
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	writeManifest(t, dir, spec{name: "bash", exe: exe, sha: sha, events: "  pre_tool_use: {timeout: 2s, on_failure: fail-open, tools: [Bash]}"})
	writeManifest(t, dir, spec{name: "any", exe: exe, sha: sha, events: "  pre_tool_use: {timeout: 500ms, on_failure: fail-closed}"})
	writeManifest(t, dir, spec{name: "start", exe: exe, sha: sha, events: "  session_start: {timeout: 1s, on_failure: fail-open}"})
	// Invalid, but skimming does not validate: its subscription counts, and
	// the full load (in-process or in the server) reports the problem.
	writeManifest(t, dir, spec{name: "sloppy", exe: exe, sha: sha, events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open}", extra: "bogus: 1\n"})
	writeManifest(t, dir, spec{name: "off", exe: exe, sha: sha, events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open}"})
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
	writeManifest(t, dir, spec{name: "edit", exe: exe, sha: sha, tools: "\n  - {name: apply, capability_classes: [file_modification]}"})
	writeManifest(t, dir, spec{name: "broken", exe: exe, sha: sha, extra: "bogus: 1\n"})
	writeManifest(t, user, spec{name: "edit", exe: exe, sha: sha, tools: "\n  - {name: other, capability_classes: []}"}) // shadowed
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
