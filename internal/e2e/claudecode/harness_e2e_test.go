//go:build e2e

package claudecode

import (
	"fmt"
	"os"
	"testing"

	"github.com/nexus-harness/nexus/internal/e2e/e2ekit"
	"github.com/nexus-harness/nexus/internal/fakeanthropic"
)

// binDir holds nexus and nexus-plugins, built once for the test binary.
var binDir string

func TestMain(m *testing.M) {
	e2ekit.HookTimerMain()
	dir, err := e2ekit.BuildCommands("nexus-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The session helpers are e2ekit's, which the Codex checks share (a
// Claude Code session beside a Codex one in one project).
type (
	session     = e2ekit.ClaudeSession
	sessionOpts = e2ekit.ClaudeOpts
	mcpStatus   = e2ekit.MCPStatus
)

// newSession is a project with nexus installed for Claude Code (unless
// o.NoNexus), its own HOME and the fake API.
func newSession(t *testing.T, api *fakeanthropic.Server, o sessionOpts) *session {
	t.Helper()
	return e2ekit.NewClaudeSession(t, api, binDir, o)
}
