package launch

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

const exampleDir = "../../../examples/plugins/shellguard"

// installExample builds the example plugin (its own Go module, importing
// only the public SDK) and installs it, with its shipped manifest, into a
// project's .nexus/plugins/ as a user would. It returns the project root.
func installExample(t testing.TB) string {
	t.Helper()
	bin := buildPlugin(t, exampleDir)
	project := t.TempDir()
	dir := filepath.Join(ProjectPluginDir(project), "shellguard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "shellguard")
	if err := os.Link(bin, exe); err != nil {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(exampleDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^sha256: .*$`)
	manifest = re.ReplaceAll(manifest, []byte(`sha256: "`+plugintest.Digest(t, exe)+`"`))
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return project
}

func TestExamplePlugin(t *testing.T) {
	t.Parallel()
	project := installExample(t)
	m := openManager(t, Options{ProjectDir: project})
	ctx := context.Background()

	list := m.List()
	if len(list) != 1 || list[0].Name != "shellguard" || list[0].Source != SourceProject {
		t.Fatalf("List = %+v", list)
	}

	tools, err := m.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "shellguard_assess_command" || !tools[0].Spec.Annotations.ReadOnly {
		t.Fatalf("tools = %+v", tools)
	}

	res, err := m.CallTool(ctx, "shellguard_assess_command", json.RawMessage(`{"command":"sudo rm -rf /"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "refused: ") || !strings.Contains(string(res.Structured), `"refused":true`) {
		t.Fatalf("assess = %+v", res)
	}

	tests := []struct {
		tool, command string
		denied        bool
	}{
		{"Bash", "rm -rf /", true},
		{"Bash", "ls -la && rm -fr ~", true},
		{"Bash", "rm -rf ./build", false},
		{"Read", "rm -rf /", false}, // not a Bash call: shellguard is not even asked
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"command": tt.command})
		r := m.Dispatch(ctx, &sdk.Event{Name: sdk.EventPreToolUse, ToolName: tt.tool, ToolInput: in})
		if r.Denied != tt.denied {
			t.Errorf("%s %q: denied = %v, want %v (%+v)", tt.tool, tt.command, r.Denied, tt.denied, r)
		}
		if tt.denied && (r.DeniedBy != "shellguard" || !strings.HasPrefix(r.Reason, "shellguard: refusing")) {
			t.Errorf("%q: denied by %q with %q", tt.command, r.DeniedBy, r.Reason)
		}
	}

	rep, err := m.Verify(ctx, "shellguard")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Notes) != 0 || rep.Protocol != sdk.ProtocolVersion || !rep.MTLS || len(rep.Tools) != 1 {
		t.Fatalf("Verify = %+v", rep)
	}
}

// TestExampleModuleTests runs the example's own tests, which use only the
// SDK and its sdktest helper.
func TestExampleModuleTests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a second module")
	}
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = exampleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in %s: %v\n%s", exampleDir, err, out)
	}
}
