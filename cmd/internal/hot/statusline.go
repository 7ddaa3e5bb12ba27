package hot

import (
	"io"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host/claude"
)

// StatusLine is `nexus statusline`: one line about the project's nexus
// state for Claude Code's status line, from its status-line JSON on stdin.
// It never fails: a problem is the line itself.
func StatusLine(g Globals, stdin io.Reader) string {
	in, err := claude.ReadStatusInput(stdin)
	if err != nil {
		return "nexus: " + err.Error()
	}
	if g.Project == "" {
		g.Project = harness.EventProject(in.Dir())
	}
	o, err := ComposeOptions(g)
	if err != nil {
		return "nexus: " + err.Error()
	}
	o.Host = claude.Host{}
	r := compose.New(o)
	if _, err := r.Config(); err != nil {
		return "nexus: configuration error (run nexus doctor)"
	}
	l, err := r.Layout("")
	if err != nil {
		return "nexus: " + err.Error()
	}
	return claude.StatusLine(l)
}
