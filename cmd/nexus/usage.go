package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, the same for every command (README "Exit status"):
//
//	0  the command did what was asked
//	1  it failed, or found problems (validate, conformance, doctor)
//	2  it was called wrongly: an unknown command or flag, a missing or extra argument
//	3  a configuration file cannot be read or parsed (a problem in one key
//	   is a warning: the key keeps its default); hook, mcp and statusline go
//	   on without the file instead, and show the problem
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitConfig  = 3
)

// failLoudly makes the command tree reject what it does not understand:
// cobra on its own prints help and exits 0 for `nexus plugin frob`, and
// reports a wrong argument count as an ordinary failure. Every group
// command (one with subcommands and nothing of its own to run) gets an
// argument check naming the unknown command and a run that asks for a
// subcommand; every argument check's error becomes a usage error.
func failLoudly(c *cobra.Command) {
	for _, sub := range c.Commands() {
		failLoudly(sub)
	}
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = unknownCommand
		c.RunE = needsCommand
		return
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err == nil || isUsageError(err) {
				return err
			}
			return usagef("%s: %v (see `%s --help`)", cmd.CommandPath(), err, cmd.CommandPath())
		}
	}
}

// unknownCommand is the argument check of group commands: whatever
// reaches it was not found as a subcommand.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set only when it suggests itself
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("%s (commands: %s)", msg, strings.Join(subcommandNames(cmd), ", "))
}

// needsCommand runs a group command called alone.
func needsCommand(cmd *cobra.Command, _ []string) error {
	return usagef("%s needs a command: %s (see `%s --help`)", cmd.CommandPath(), strings.Join(subcommandNames(cmd), ", "), cmd.CommandPath())
}

func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return names
}

// helpCommand replaces cobra's, which prints "Unknown help topic" and
// exits 0.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND...]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err == nil && target != nil && target.DisableFlagParsing && target.RunE != nil {
				// A command that hands its arguments on (nexus decision)
				// gives the help of what it hands them to.
				return target.RunE(target, append(rest, "--help"))
			}
			if err != nil || target == nil || len(rest) > 0 {
				return usagef("no help for %q: unknown command (see `%s --help`)", strings.Join(args, " "), root.Name())
			}
			return target.Help()
		},
	}
}
