package mcpserver

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildNexus builds the real binary.
func buildNexus(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nexus")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/nexus")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
