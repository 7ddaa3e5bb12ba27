package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
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
			line, _ := hot.StatusLine(a.globals(), cmd.InOrStdin()) // resolves itself: never *hot.ErrFull
			fmt.Fprintln(cmd.OutOrStdout(), line)
			return nil
		},
	}
	var managed bool
	addFlags(cmd.Flags(), hot.StatusLineFlags(&managed))
	return cmd
}
