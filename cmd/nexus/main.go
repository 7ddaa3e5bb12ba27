// Command nexus is a harness for AI coding agents: the host calls `nexus
// hook` on every lifecycle event and talks to `nexus mcp` for tools.
//
// This is the small front program, the one the user installs and
// registers. A hook process links and initialises every package its
// program imports, so the front imports only what the hot commands use
// (hook, statusline, version; package cmd/internal/hot) and runs those
// itself. Every other command, and a hot command whose arguments it does
// not take as they stand (--help, a flag it does not know, a global flag
// before the command), runs in nexus-full, the whole command line,
// installed beside it: the front replaces itself with that program, same
// arguments, same process.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	args := os.Args[1:]
	code, ok, stdin := runHot(context.Background(), args, os.Stdin, os.Stdout, os.Stderr)
	if ok {
		os.Exit(code)
	}
	os.Exit(delegate(args, stdin, os.Stderr))
}

// Exit statuses, as the full command line's (README "Exit status").
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// runHot runs a hot command named first in args, under the signals'
// default action (see cmd/nexus-full's signalContext), and reports
// whether it did: false leaves the arguments to nexus-full, with what the
// command read of stdin when it read some (the configuration was not
// resolved for its inputs: *hot.ErrFull).
func runHot(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ran bool, read []byte) {
	if len(args) == 0 {
		return 0, false, nil
	}
	fs := &flagSet{}
	var g hot.Globals
	var core string
	fs.add(hot.GlobalFlags(&g.Project, &core, &g.JSON))
	g.Flags, g.Front = fs, true
	var run func(rest []string) error
	switch args[0] {
	case "hook":
		var ha hot.HookArgs
		fs.add(hot.HookFlags(&ha))
		run = func(rest []string) error {
			if len(rest) == 1 {
				ha.Event = rest[0]
			}
			return hot.Hook(ctx, g, ha, stdin, stdout, stderr)
		}
	case "statusline":
		var managed bool
		fs.add(hot.StatusLineFlags(&managed))
		run = func([]string) error {
			line, err := hot.StatusLine(g, stdin)
			if err == nil {
				fmt.Fprintln(stdout, line)
			}
			return err
		}
	case "version":
		run = func([]string) error { return hot.Version(g, version, stdout) }
	default:
		return 0, false, nil
	}
	// Anything the flags do not take as it stands (--help among them) is
	// nexus-full's to answer, with its help and usage messages.
	if err := fs.parse(args[1:]); err != nil {
		return 0, false, nil
	}
	maxArgs := 0
	if args[0] == "hook" {
		maxArgs = 1
	}
	if len(fs.args) > maxArgs {
		return 0, false, nil
	}
	if err := run(fs.args); err != nil {
		var full *hot.ErrFull
		if errors.As(err, &full) {
			return 0, false, full.Stdin
		}
		fmt.Fprintln(stderr, "nexus:", err)
		if hot.IsUsageError(err) {
			return exitUsage, true, nil
		}
		return exitFailure, true, nil
	}
	return exitOK, true, nil
}
