package store

import (
	"os"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionstest"
)

// TestMain keeps the decision store's persistent index out of the user's
// cache folder: every test run gets its own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nexus-decisions-index-")
	if err != nil {
		panic(err)
	}
	os.Setenv("NEXUS_DECISIONS_INDEX_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	decisionstest.Cleanup()
	os.Exit(code)
}
