// Command nexus is a harness for AI coding agents: the host calls
// `nexus hook` on every lifecycle event and talks to `nexus mcp` for tools.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code (see usage.go):
// usage errors exit 2, failures 1; commands that need another code return
// an *exitError.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmdFor(args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil && !ee.Silent {
			fmt.Fprintln(stderr, "nexus:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "nexus:", err)
	if isUsageError(err) {
		return exitUsage
	}
	return exitFailure
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	Code   int
	Err    error
	Silent bool // the command already reported the problem
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// usageError marks errors in how nexus was called.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
