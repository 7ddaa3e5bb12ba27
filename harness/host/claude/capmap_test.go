package claude

import (
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// The Go table must be what the documented YAML says.
func TestGeneratedMapMatchesYAML(t *testing.T) {
	parsed, err := gate.ParseMap("capabilities.yaml", capabilitiesYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parsed, capabilityMap()) {
		t.Error("capmap_gen.go is stale: run go generate ./harness/host/claude")
	}
}

// Every class a nexus-core capability blocks must reach at least one of
// Claude Code's tools or nexus's, or that capability would silently block
// nothing in Claude Code.
func TestEveryBlockedClassMapsToATool(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	cov, err := gate.Coverage(CapabilityMap(), nil, "nx_")
	if err != nil {
		t.Fatal(err)
	}
	caps := core.Manifest().Vocabulary.Capabilities
	if len(caps) == 0 {
		t.Fatal("the distribution declares no capabilities")
	}
	for _, cp := range caps {
		if len(cp.BlocksSemanticClasses) == 0 {
			t.Errorf("capability %s blocks no class", cp.ID)
		}
		for _, class := range cp.BlocksSemanticClasses {
			if len(cov[class]) == 0 {
				t.Errorf("capability %s blocks class %q, which no tool in capabilities.yaml or the gate's nexus.yaml carries", cp.ID, class)
			}
		}
	}
	found := false
	for _, tool := range cov["nexus_task_state_transition"] {
		found = found || tool == "nx_task_close"
	}
	if !found {
		t.Errorf("nx_task_close does not carry nexus_task_state_transition: %v", cov["nexus_task_state_transition"])
	}
}
