// Command nexus-plugins is nexus's plugin host: the program that speaks
// gRPC to plugins (hashicorp/go-plugin), so that nexus itself, which runs
// on every hook of a coding-agent host, does not pay the ~3 ms of start-up
// that linking gRPC costs every process. nexus starts it; it is not meant
// to be run by hand.
//
//	nexus-plugins host                              plugins for one nexus process, over stdin/stdout
//	nexus-plugins serve decisions                   the bundled decision store, as a plugin
//	nexus-plugins hook-server --project DIR [--idle D]  the per-project hook server
//	nexus-plugins decision [OPTIONS] -- ARGS...     `nexus decision ARGS...`
//
// It also links the decision store's command line, which `nexus decision`
// runs here: nexus itself does not link the store, so that every hook
// starts faster (docs/architecture.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/launch"
	"github.com/nexus-harness/nexus/plugins/decisions"
	"github.com/nexus-harness/nexus/plugins/decisions/cli"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/sdk/pluginserver"
)

const usage = `nexus-plugins runs nexus's plugins; nexus starts it itself.

  nexus-plugins host                                 serve a nexus process over stdin/stdout
  nexus-plugins serve decisions                      run the bundled decision store plugin
  nexus-plugins hook-server --project DIR [--idle D] keep a project's event plugins running for hooks
  nexus-plugins decision [--frontmatter MODE] [--nauro-home DIR] [--dir DIR] [--config-error TEXT] -- ARGS...
                                                     run ` + "`nexus decision ARGS...`" + ` (nexus passes its settings)

Exit status (as for nexus): 0 done, 1 failed, 2 called wrongly, 3 nexus's configuration
does not load (a file it cannot read or parse).
`

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "serve":
		switch {
		case len(args) == 2 && args[1] == decisionsapi.Name:
			if os.Getenv("GOGC") == "" {
				// The store keeps a large, long-lived heap (about 1.4 KiB per
				// decision) and allocates little per call: a heap goal of
				// 1.5x the live data instead of 2x keeps its RSS in budget.
				debug.SetGCPercent(50)
			}
			pluginserver.Serve(decisions.New())
			return 0
		case len(args) == 1:
			fmt.Fprintf(stderr, "nexus-plugins serve: name the built-in plugin to run (built in: %s)\n", decisionsapi.Name)
		case len(args) == 2:
			fmt.Fprintf(stderr, "nexus-plugins serve: no built-in plugin %q (built in: %s)\n", args[1], decisionsapi.Name)
		default:
			fmt.Fprintf(stderr, "nexus-plugins serve: takes one plugin name, got %q\n", args[1:])
		}
		return 2
	case "host":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "nexus-plugins host: takes no arguments, got %q\n", args[1:])
			return 2
		}
		return host(stdin, stdout, stderr)
	case "hook-server":
		return hookServer(args[1:], stderr)
	case "decision":
		return decision(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "nexus-plugins: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func logger(w io.Writer, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: level, Output: w})
}

// host serves one nexus process: requests on stdin, answers on stdout
// (nothing else is ever written there), the log on stderr. It stops its
// plugins at the end of stdin, or on SIGINT, SIGTERM or SIGHUP.
func host(stdin io.ReadCloser, stdout, stderr io.Writer) int {
	proto := stdout
	os.Stdout = os.Stderr // a stray print must not corrupt the protocol
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-sigs
		stdin.Close() // ends ServeHost, which stops the plugins
	}()
	// Info: a plugin's own output (its stderr lines) is logged at info
	// unless it says otherwise; nexus's own plugin messages are warnings.
	err := launch.ServeHost(context.Background(), stdin, proto, pluginhost.Options{Logger: logger(stderr, hclog.Info)})
	if err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintln(stderr, "nexus-plugins host:", err)
		return 1
	}
	return 0
}

func hookServer(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("hook-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", "", "the project root")
	idle := fs.Duration("idle", pluginhost.DefaultHookServerIdle, "exit after this long without a request")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the flag package printed the usage
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "nexus-plugins hook-server: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	if *project == "" {
		fmt.Fprintln(stderr, "nexus-plugins hook-server: --project is required")
		return 2
	}
	dir, err := pluginhost.RuntimeDir(*project)
	if err != nil {
		fmt.Fprintln(stderr, "nexus-plugins hook-server:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	s := &launch.HookServer{Dir: dir, Idle: *idle, Exe: pluginhost.ExeIdentity(),
		Base: pluginhost.Options{Logger: logger(stderr, hclog.Info), DigestCache: pluginhost.DefaultDigestCache()}}
	if err := s.Run(ctx); err != nil && !errors.Is(err, launch.ErrHookServerRunning) {
		fmt.Fprintln(stderr, "nexus-plugins hook-server:", err)
		return 1
	}
	return 0
}

// decision runs the decision store's command line for `nexus decision`.
// nexus passes what its configuration says (decisions.frontmatter,
// decisions.nauro_home, the --project folder), or why it could not load it:
// that error stops a subcommand as it would have in nexus, while --help
// still works.
func decision(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	frontmatter := fs.String("frontmatter", "", "decisions.frontmatter from nexus's configuration")
	home := fs.String("nauro-home", "", "decisions.nauro_home from nexus's configuration")
	dir := fs.String("dir", "", "the folder the store is looked for from (default: the working directory)")
	cfgErr := fs.String("config-error", "", "why nexus could not load its configuration")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the flag package printed the usage
		}
		return 2
	}
	opts := cli.Options{Stdout: stdout, Stderr: stderr, Frontmatter: *frontmatter, Home: *home, Dir: *dir}
	if *cfgErr != "" {
		// The configuration error's exit status, as for every nexus command.
		opts.Prepare = func(*cli.Options) error { return &cli.ExitError{Code: 3, Err: errors.New(*cfgErr)} }
	}
	return cli.Run(fs.Args(), opts)
}
