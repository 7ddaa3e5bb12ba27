package codex

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
		t.Error("capmap_gen.go is stale: run go generate ./harness/host/codex")
	}
}

// Every class a nexus-core capability blocks must reach at least one of
// Codex's tools or nexus's, or that capability would silently block
// nothing in Codex.
func TestEveryBlockedClassMapsToATool(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	cov, err := gate.Coverage(CapabilityMap(), nil, "nx_")
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range core.Manifest().Vocabulary.Capabilities {
		for _, class := range cp.BlocksSemanticClasses {
			if len(cov[class]) == 0 {
				t.Errorf("capability %s blocks class %q, which no tool in capabilities.yaml or the gate's nexus.yaml carries", cp.ID, class)
			}
		}
	}
	if got := cov["file_modification"]; !contains(got, ToolApplyPatch) {
		t.Errorf("apply_patch does not carry file_modification: %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
