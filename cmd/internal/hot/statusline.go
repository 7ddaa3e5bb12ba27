package hot

import (
	"bytes"
	"io"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host/claude"
)

// StatusLine is `nexus statusline`: one line about the project's nexus
// state for Claude Code's status line, from its status-line JSON on stdin.
// It never fails (a problem is the line itself) but in the front, with
// *ErrFull.
func StatusLine(g Globals, stdin io.Reader) (string, error) {
	var data []byte
	if g.Front {
		var err error
		if data, err = io.ReadAll(io.LimitReader(stdin, claude.MaxStatusInput+1)); err != nil {
			return "nexus: " + err.Error(), nil
		}
		stdin = bytes.NewReader(data)
	}
	line, err := statusLine(g, stdin)
	if unresolved(err) {
		return "", &ErrFull{Stdin: data}
	}
	return line, nil
}

func statusLine(g Globals, stdin io.Reader) (string, error) {
	in, err := claude.ReadStatusInput(stdin)
	if err != nil {
		return "nexus: " + err.Error(), nil
	}
	if g.Project == "" {
		g.Project = harness.EventProject(in.Dir())
	}
	o, err := ComposeOptions(g)
	if err != nil {
		return "nexus: " + err.Error(), nil
	}
	// Like a hook, the status line goes on without a configuration file
	// that does not load, and shows that there are problems.
	o.Host, o.KeepGoing, o.Warn = claude.Host{}, true, nil
	r := compose.New(o)
	if _, err := r.Config(); err != nil {
		return "nexus: configuration error (run nexus doctor)", err
	}
	l, err := r.Layout("")
	if err != nil {
		return "nexus: " + err.Error(), nil
	}
	return claude.WithConfigProblems(claude.StatusLine(l), len(r.ConfigProblems())), nil
}
