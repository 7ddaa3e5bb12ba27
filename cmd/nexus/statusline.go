package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/host/claude"
)

// newStatusLineCmd is Claude Code's status-line command. Like `nexus hook`
// it is a hot command: it runs after every assistant message, so it loads
// only the configuration and reads four small state files.
func newStatusLineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "statusline",
		Short: "Print one status line for Claude Code (its status-line JSON on stdin)",
		Long: `Print one line about the project's nexus state for Claude Code's status line: the
active skill, plan issues decided/total, tasks done/total, agents running, and how many
problems the configuration has (nexus doctor names them). Claude Code
passes its status-line JSON on stdin; the project is its workspace.project_dir (else cwd,
else this folder), or --project. "nexus install claude --statusline" registers it.

It never fails: a problem is printed as the line itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), statusLine(a, cmd))
			return nil
		},
	}
	var managed bool
	cmd.Flags().BoolVar(&managed, "managed", false, "marks the status line written by nexus install (no effect)")
	_ = cmd.Flags().MarkHidden("managed")
	return cmd
}

func statusLine(a *app, cmd *cobra.Command) string {
	in, err := claude.ReadStatusInput(cmd.InOrStdin())
	if err != nil {
		return "nexus: " + err.Error()
	}
	if a.projectFlag == "" {
		a.projectFlag = harness.EventProject(in.Dir())
	}
	// Like a hook, the status line goes on without a configuration file
	// that does not load, and shows that there are problems.
	a.host, a.hostDoor, a.quiet = claude.Host{}, true, true
	r, err := a.compose()
	if err != nil {
		return "nexus: " + err.Error()
	}
	if _, err := r.Config(); err != nil {
		return "nexus: configuration error (run nexus doctor)"
	}
	l, err := r.Layout("")
	if err != nil {
		return "nexus: " + err.Error()
	}
	return claude.WithConfigProblems(claude.StatusLine(l), len(r.ConfigProblems()))
}
