package mcpserver

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildNexus builds the real binaries: nexus, the front, with nexus-full,
// where `nexus mcp` runs, beside it.
func buildNexus(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "../../cmd/nexus", "../../cmd/nexus-full")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "nexus")
}
