package launch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

// builtinTP is a built-in manifest running the test plugin, with its tools
// exposed under their own names.
func builtinTP(t testing.TB, name string) *Manifest {
	return &Manifest{Name: name, ProtocolVersion: 2, Executable: testPluginBinary(t), BareToolNames: true,
		Tools: []ToolDecl{{Name: "pid", CapabilityClasses: []string{}}, {Name: "echo", CapabilityClasses: []string{"file_modification"}}}}
}

func TestBuiltinBareNamesShadowingAndDisabled(t *testing.T) {
	t.Parallel()
	exe := testPluginBinary(t)
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	// A project plugin named like the built-in one is shadowed (and
	// reported); a disabled one is skipped silently.
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "store", Exe: exe})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "other", Exe: exe})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "off", Exe: exe})
	m, err := Open(Options{ProjectDir: project, NoUserPlugins: true, Logger: plugintest.Logger(t),
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
	m2, err := Open(Options{ProjectDir: project, NoUserPlugins: true, Logger: plugintest.Logger(t),
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
	man, err := LoadManifest(plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "echo", Exe: exe, Tools: "\n  - {name: text, capability_classes: []}"}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New([]*Manifest{bi, man}, Options{Logger: plugintest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ref, _ := m.Resolve("echo_text"); ref.Plugin != "bi" {
		t.Fatalf("echo_text belongs to %q, want the built-in", ref.Plugin)
	}
	if len(m.Problems()) != 1 || !strings.Contains(m.Problems()[0].Error(), `plugin echo: tool "text" is not served: its name echo_text is reserved (nexus's built-in plugin bi serves it)`) {
		t.Fatalf("problems %v", m.Problems())
	}
	if got := len(m.DeclaredTools()); got != 1 {
		t.Fatalf("%d declared tools, want 1", got)
	}
}

func TestBuiltinManifest(t *testing.T) {
	exe := testPluginBinary(t)
	bad := &Manifest{Name: "Bad_Name", ProtocolVersion: 2, Executable: exe}
	if _, err := New([]*Manifest{bad}, Options{}); err == nil || !strings.Contains(err.Error(), "Bad_Name") {
		t.Fatalf("invalid built-in manifest: %v", err)
	}
	// A built-in plugin may skip the digest and pass arguments.
	man := &Manifest{Name: "builtin", ProtocolVersion: 2, Executable: exe, Args: []string{"serve-plugin"},
		Tools: []ToolDecl{{Name: "pid", CapabilityClasses: []string{}}}}
	m, err := New([]*Manifest{man}, Options{Logger: plugintest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pid := callPID(t, m, "builtin_pid")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err == nil && !strings.Contains(string(cmdline), "serve-plugin") {
		t.Errorf("plugin command line %q lacks its arguments", cmdline)
	}
	// A manifest from a file can never skip the digest.
	man2 := *man
	man2.Name, man2.Source, man2.Path = "fromfile", SourceProject, "/x/nexus-plugin.yaml"
	m2, err := New([]*Manifest{&man2}, Options{Logger: plugintest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, err := m2.CallTool(context.Background(), "fromfile_pid", nil); err == nil {
		t.Fatal("a file manifest without a digest was started")
	}
}
