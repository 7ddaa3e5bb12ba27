package decisions

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

var updateSpecs = flag.Bool("update", false, "rewrite decisionsapi/tools.json from the store's tool specs")

// The tool descriptions nexus lists before the store starts
// (decisionsapi.ToolSpecs) are exactly what the store describes when it
// starts, one per tool name decisionsapi knows, in order.
func TestToolSpecsPublished(t *testing.T) {
	want, err := json.MarshalIndent(toolSpecs(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateSpecs {
		if err := os.WriteFile(filepath.Join("decisionsapi", "tools.json"), want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := decisionsapi.ToolSpecs(); !bytes.Equal(got, want) {
		t.Fatalf("decisionsapi/tools.json is not the store's tool specs: run go test ./plugins/decisions -run TestToolSpecsPublished -update")
	}
	var specs []sdk.ToolSpec
	if err := json.Unmarshal(decisionsapi.ToolSpecs(), &specs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(decisionsapi.Tools()))) {
		t.Errorf("specs name %v, decisionsapi.Tools() %v", names, decisionsapi.Tools())
	}
}
