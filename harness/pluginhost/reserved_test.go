package pluginhost

import (
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

// A discovered plugin never takes a name nexus or a plugin it bundles
// serves, whatever order the manifests come in (the plugin host receives
// them sorted by name, "check" before "decisions").
func TestReservedToolNamesAreRefused(t *testing.T) {
	exe := "/nonexistent/plugin"
	sha := strings.Repeat("a", 64)
	store := &Manifest{Name: "decisions", ProtocolVersion: 2, Executable: exe, BareToolNames: true,
		Tools: []ToolDecl{{Name: "check_decision", CapabilityClasses: []string{}}}}
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "check", Exe: exe, SHA: sha, Tools: "\n  - {name: decision, capability_classes: []}\n  - {name: other, capability_classes: []}"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "nx", Exe: exe, SHA: sha, Tools: "\n  - {name: plan_start, capability_classes: []}"})
	base := Options{ProjectDir: project, NoUserPlugins: true, Logger: NopLogger{},
		Reserved: map[string]string{"check_decision": "nexus's bundled decision store"}, ReservedPrefixes: []string{"nx_"}}

	cases := []struct {
		name    string
		builtin []*Manifest
		want    []string
	}{
		{"store on", []*Manifest{store}, []string{
			`plugin check: tool "decision" is not served: its name check_decision is reserved (nexus's built-in plugin decisions serves it); rename the plugin or the tool`,
			`plugin nx: tool "plan_start" is not served: its name nx_plan_start is reserved (nexus's own tools are named nx_*); rename the plugin or the tool`}},
		{"store off", nil, []string{
			`plugin check: tool "decision" is not served: its name check_decision is reserved (nexus's bundled decision store serves it); rename the plugin or the tool`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			o.Builtin = c.builtin
			m, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			// Again from the manifests in name order, as the plugin host gets them.
			m2, err := New(m.Manifests(), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, mm := range []*Manager{m, m2} {
				ref, ok := mm.Resolve("check_decision")
				if ok && ref.Plugin != "decisions" {
					t.Fatalf("check_decision resolves to plugin %s", ref.Plugin)
				}
				if _, ok := mm.Resolve("check_other"); !ok {
					t.Error("the clashing plugin's other tool is not served")
				}
				var got []string
				for _, p := range mm.Problems() {
					if p.Tool != "" {
						got = append(got, p.Error())
					}
				}
				all := strings.Join(got, "\n")
				for _, w := range c.want {
					if !strings.Contains(all, w) {
						t.Errorf("problems lack\n  %s\ngot\n  %s", w, all)
					}
				}
				if len(mm.Refused("check")) != 1 {
					t.Errorf("Refused(check) = %v", mm.Refused("check"))
				}
			}
			// Hooks' capability gate reads one manifest: the same refusal.
			if ref, ok := LookupTool(o, "check_decision"); ok && ref.Plugin != "decisions" {
				t.Errorf("LookupTool(check_decision) = %+v", ref)
			}
			if _, ok := LookupTool(o, "nx_plan_start"); ok {
				t.Error("LookupTool(nx_plan_start) found a plugin tool")
			}
		})
	}
}
