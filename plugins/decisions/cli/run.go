package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Run runs `nexus decision ARGS...` and returns its exit status, the same
// as for every nexus command: 0 done, 1 failed, 2 called wrongly (an
// unknown command or flag, a missing or extra argument). A failure is
// printed to opts.Stderr as "nexus: ...". The plugin host program runs it
// for `nexus decision` (nexus itself does not link the store).
func Run(args []string, opts Options) int {
	dec := NewCommand(opts)
	strict(dec)
	root := &cobra.Command{Use: "nexus", SilenceUsage: true, SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true}}
	root.AddCommand(dec)
	root.SetOut(dec.OutOrStdout())
	root.SetErr(dec.ErrOrStderr())
	root.SetArgs(append([]string{dec.Name()}, args...))
	err := root.Execute()
	if err == nil {
		return 0
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	fmt.Fprintln(dec.ErrOrStderr(), "nexus:", err)
	return code
}

// strict makes the tree reject what it does not understand, as every nexus
// command does: cobra alone prints help and exits 0 for an unknown
// subcommand, and reports a wrong argument count as an ordinary failure.
func strict(dec *cobra.Command) {
	dec.Args = func(cmd *cobra.Command, a []string) error {
		if len(a) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", a[0], cmd.CommandPath())
		cmd.SuggestionsMinimumDistance = 2
		if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return &ExitError{Code: 2, Err: fmt.Errorf("%s (commands: %s)", msg, strings.Join(subcommands(cmd), ", "))}
	}
	dec.RunE = func(cmd *cobra.Command, _ []string) error {
		return &ExitError{Code: 2, Err: fmt.Errorf("%s needs a command: %s (see `%s --help`)", cmd.CommandPath(), strings.Join(subcommands(cmd), ", "), cmd.CommandPath())}
	}
	for _, sub := range dec.Commands() {
		if check := sub.Args; check != nil {
			sub.Args = func(cmd *cobra.Command, a []string) error {
				err := check(cmd, a)
				var ee *ExitError
				if err == nil || errors.As(err, &ee) {
					return err
				}
				return &ExitError{Code: 2, Err: fmt.Errorf("%s: %v (see `%s --help`)", cmd.CommandPath(), err, cmd.CommandPath())}
			}
		}
	}
}

func subcommands(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return names
}
