package pluginhost

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseValidManifest(t *testing.T) {
	m, err := LoadManifest("testdata/manifests/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/manifests")
	want := &Manifest{
		Name: "shellguard", Version: "1.2.0", Description: "Refuses dangerous shell commands.",
		ProtocolVersion: 2, Executable: "bin/shellguard",
		SHA256:   "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
		Priority: 10, ProjectDir: true, Env: []string{"NAURO_HOME"},
		Tools: []ToolDecl{
			{Name: "lint_command", CapabilityClasses: []string{}, Timeout: Duration(5 * time.Second)},
			{Name: "write_note", CapabilityClasses: []string{"file_creation", "file_modification"}},
		},
		Events: map[string]Subscription{
			"pre_tool_use":  {Timeout: Duration(2 * time.Second), OnFailure: FailClosed, Tools: []string{"Bash", "mcp__*"}},
			"session_start": {Timeout: Duration(500 * time.Millisecond), OnFailure: FailOpen},
		},
		Path: filepath.Join(abs, "valid.yaml"), Dir: abs,
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got  %+v\nwant %+v", m, want)
	}
	if got := m.ExecutablePath(); got != filepath.Join(abs, "bin", "shellguard") {
		t.Errorf("ExecutablePath = %s", got)
	}
	if got := strings.Join(m.EventNames(), ","); got != "session_start,pre_tool_use" {
		t.Errorf("EventNames = %s (want lifecycle order)", got)
	}
	s := m.Events["pre_tool_use"]
	for tool, want := range map[string]bool{"Bash": true, "mcp__nexus__x": true, "Read": false, "": false} {
		if s.Matches(tool) != want {
			t.Errorf("Matches(%q) = %v", tool, !want)
		}
	}
}

const validHead = `name: demo
version: "1"
protocol_version: 2
executable: demo
sha256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
`

func TestManifestErrorsNameFileAndField(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must appear as a problem line (after "<file>:")
	}{
		{"missing required", "name: demo\nversion: \"1\"\n", []string{
			"1:1: (top level): missing properties 'protocol_version', 'executable', 'sha256'"}},
		{"bad name", strings.Replace(validHead, "name: demo", "name: Demo_Plugin", 1) + "tools: [{name: t, capability_classes: []}]\n", []string{
			"1:1: name: 'Demo_Plugin' does not match pattern"}},
		{"version as number", strings.Replace(validHead, `version: "1"`, "version: 1.10", 1) + "tools: [{name: t, capability_classes: []}]\n", []string{
			"2:1: version: got number, want string"}},
		{"protocol 3", strings.Replace(validHead, "protocol_version: 2", "protocol_version: 3", 1) + "tools: [{name: t, capability_classes: []}]\n", []string{
			"3:1: protocol_version: value must be 2"}},
		{"short digest", strings.Replace(validHead, "e7ae\"", "\"", 1) + "tools: [{name: t, capability_classes: []}]\n", []string{
			"5:1: sha256: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266' does not match pattern '^[0-9a-f]{64}$'"}},
		{"typo key", validHead + "tools: [{name: t, capability_classes: []}]\ndescripton: x\n", []string{
			"7:1: descripton: unknown key"}},
		{"tool without classes", validHead + "tools:\n  - name: t\n", []string{
			"7:5: tools[0]: missing property 'capability_classes'"}},
		{"bad class", validHead + "tools:\n  - name: t\n    capability_classes: [File-Edit]\n", []string{
			"8:26: tools[0].capability_classes[0]: 'File-Edit' does not match pattern"}},
		{"unknown event", validHead + "events:\n  pre_tool: {timeout: 1s, on_failure: fail-open}\n", []string{
			"7:3: events.pre_tool: unknown key"}},
		{"bad timeout", validHead + "events:\n  session_start: {timeout: 5 seconds, on_failure: fail-open}\n", []string{
			"7:19: events.session_start.timeout: '5 seconds' does not match pattern"}},
		{"bad policy", validHead + "events:\n  session_start: {timeout: 1s, on_failure: ignore}\n", []string{
			"7:32: events.session_start.on_failure: value must be one of 'fail-open', 'fail-closed'"}},
		{"missing policy", validHead + "events:\n  session_start: {timeout: 1s}\n", []string{
			"7:3: events.session_start: missing property 'on_failure'"}},
		{"nothing offered", validHead, []string{
			"1:1: (top level): declares neither tools nor events"}},
		{"escaping executable", strings.Replace(validHead, "executable: demo", "executable: ../../bin/sh", 1) + "tools: [{name: t, capability_classes: []}]\n", []string{
			`4:1: executable: "../../bin/sh" leaves the plugin's folder`}},
		{"duplicate tool", validHead + "tools:\n  - {name: t, capability_classes: []}\n  - {name: t, capability_classes: []}\n", []string{
			`8:6: tools[1].name: tool "t" is declared twice`}},
		{"timeout too long", validHead + "events:\n  session_start: {timeout: 11m, on_failure: fail-open}\n", []string{
			"7:19: events.session_start.timeout: 11m0s is longer than the maximum 10m0s"}},
		{"tools filter on a tool-less event", validHead + "events:\n  session_start: {timeout: 1s, on_failure: fail-open, tools: [Bash]}\n", []string{
			"7:55: events.session_start.tools: only pre_tool_use and post_tool_use carry a tool name"}},
		{"bad glob", validHead + "events:\n  pre_tool_use: {timeout: 1s, on_failure: fail-open, tools: [\"[\"]}\n", []string{
			`7:62: events.pre_tool_use.tools[0]: bad pattern "["`}},
		{"yaml syntax", "name: [demo\n", []string{"1:1: (file): did not find expected ',' or ']'"}},
		{"duplicate key", validHead + "name: again\ntools: [{name: t, capability_classes: []}]\n", []string{`6:1: (file): duplicate key "name"`}},
		{"empty", "", []string{"1:1: (file): empty"}},
		{"not a mapping", "- a\n- b\n", []string{"1:1: (top level): got array, want object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), ManifestFile)
			if err := os.WriteFile(file, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadManifest(file)
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a ManifestError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), file+":"+w) {
					t.Errorf("error does not contain %q:\n%s", file+":"+w, err)
				}
			}
		})
	}
}

func TestFieldName(t *testing.T) {
	for ptr, want := range map[string]string{
		"":                              "(top level)",
		"/name":                         "name",
		"/tools/0/name":                 "tools[0].name",
		"/events/pre_tool_use/tools/12": "events.pre_tool_use.tools[12]",
		"/a~1b":                         "a/b",
	} {
		if got := fieldName(ptr); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", ptr, got, want)
		}
	}
}

func TestManifestTooLarge(t *testing.T) {
	file := filepath.Join(t.TempDir(), ManifestFile)
	if err := os.WriteFile(file, []byte(validHead+"description: "+strings.Repeat("x", maxManifestSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadManifest(file); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaIsShipped(t *testing.T) {
	if !strings.Contains(string(SchemaJSON()), SchemaURL) {
		t.Fatal("SchemaJSON does not carry its $id")
	}
}

func FuzzParseManifest(f *testing.F) {
	valid, _ := os.ReadFile("testdata/manifests/valid.yaml")
	f.Add(valid)
	f.Add([]byte(validHead))
	f.Add([]byte("name: &a [*a]\n"))
	f.Add([]byte("events: {pre_tool_use: {timeout: 1s, on_failure: fail-open, tools: ['[']}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest("/fuzz/"+ManifestFile, data)
		if err != nil {
			if m != nil {
				t.Fatal("manifest returned with an error")
			}
			return
		}
		// Whatever is accepted is usable.
		if m.Name == "" || m.SHA256 == "" || m.ProtocolVersion != 2 || (len(m.Tools) == 0 && len(m.Events) == 0) {
			t.Fatalf("accepted an incomplete manifest: %+v", m)
		}
		for _, s := range m.Events {
			if s.Timeout <= 0 || (s.OnFailure != FailOpen && s.OnFailure != FailClosed) {
				t.Fatalf("accepted a bad subscription: %+v", s)
			}
		}
		_ = m.ExecutablePath()
	})
}
