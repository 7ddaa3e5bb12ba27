// Command nexus is a harness for AI coding agents: the host calls
// `nexus hook` on every lifecycle event and talks to `nexus mcp` for tools.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nexus-harness/nexus/internal/config"
)

func main() {
	ctx, stop := signalContext(os.Args[1:])
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is the context every command, lock wait and plugin call
// runs under: an interrupt, a termination or a hang-up cancels it, so a
// long-lived `nexus mcp` stops its plugins and a command waiting for a
// lock gives up. A second signal is not caught: it ends the process as
// usual. The hot commands (a hook, the status line, version) are left to
// the signals' default action instead: they run for milliseconds, every
// write they make is atomic, and catching a signal costs a process about
// 0.3 ms (the runtime starts a thread for it), on every tool call.
func signalContext(args []string) (context.Context, context.CancelFunc) {
	if len(args) > 0 && isHot(args[0]) {
		return context.WithCancel(context.Background())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// run executes the CLI under ctx and returns the process exit code (see
// usage.go): usage errors exit 2, a configuration file that does not load
// 3, failures 1; commands that need another code return an *exitError.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmdFor(args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
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
	if isConfigError(err) {
		fmt.Fprintln(stderr, configErrorText(err))
		return exitConfig
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

// isConfigError reports whether err is a configuration file nexus could
// not read or parse (a problem in one key is only a warning).
func isConfigError(err error) bool {
	var ce *config.Error
	return errors.As(err, &ce)
}

// configErrorText says which configuration files do not load, with what
// to do.
func configErrorText(err error) string {
	return fmt.Sprintf("nexus: the configuration does not load: %s\nnexus: fix the file and run the command again (`nexus doctor` lists every configuration problem; sessions go on without the file meanwhile)",
		strings.ReplaceAll(err.Error(), "\n", "\nnexus: "))
}
