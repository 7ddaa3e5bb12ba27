package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/mcpserver"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/harness/view"
)

// viewMemoryLimit is the soft Go heap limit of a running `nexus view`
// (unless GOMEMLIMIT says otherwise): a rebuild of a 10,000-task section
// leaves megabytes of garbage that need not double the heap.
const viewMemoryLimit = 48 << 20

func newViewCmd(a *app) *cobra.Command {
	var addr, nexusRoot string
	var open bool
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Serve a live, read-only page of this project's plan, tasks, agents, decisions and memory",
		Long: `Serve one page on this machine that shows the project's state and follows it live: the plan
with its issues and decisions and the past cycles (searchable); the task graph (left to right by
dependency depth, the ready set highlighted, cycles and missing dependencies reported) and a task
table; every host's agent tracker as a timeline; the decision store with a box to check an
approach (check_decision's answer); the memory notes with the gc report's three signals.

The page updates itself within a second of a change to .nexus/ or the decision store (file
change notification, server-sent events). nexus view never writes: it only reads the state,
through the same bounded readers as every other command.

It listens on a loopback address only (--addr, default 127.0.0.1 on a free port) and prints an
address carrying a token made for this run; opening it signs the browser in with a cookie.
Requests for another Host, from another Origin or without the token are refused. --open opens
the address in the browser (xdg-open). Ctrl-C stops the server. See docs/view.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runView(cmd, a, addr, nexusRoot, open)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	f.BoolVar(&open, "open", false, "open the page in the browser (xdg-open)")
	f.StringVar(&nexusRoot, "nexus-root", "", "the .nexus folder to show (overrides runtime.root / NEXUS_RUNTIME_ROOT)")
	return cmd
}

func runView(cmd *cobra.Command, a *app, addr, nexusRoot string, open bool) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(viewMemoryLimit)
	}
	set, err := a.Settings()
	if err != nil {
		return err
	}
	if addr, err = mcpserver.ListenAddr(addr); err != nil {
		return usagef("--addr: %v", err)
	}
	if mcpserver.Exposed(addr) {
		return usagef("--addr %s is not a loopback address: nexus view serves this machine only (127.0.0.1, ::1 or localhost)", addr)
	}
	// main's signal context: Ctrl-C ends the server cleanly.
	ctx := cmd.Context()
	h, err := harnessFor(ctx, a, compose.HarnessOptions{NexusRoot: nexusRoot})
	if err != nil {
		return err
	}
	defer h.Close()
	logger := log.New(cmd.ErrOrStderr(), "nexus view: ", 0)
	o := view.Options{Layout: h.Engine.Layout, MemoryErr: h.MemoryErr, History: tools.SearchHistory, Log: logger}
	if h.Memory != nil {
		o.Memory = h.Memory
	}
	if set.Decisions {
		o.Decisions = view.HostDecisions{Command: pluginhost.HostCommand, Args: decisionHostArgs(a, h.Engine.Layout.Project)}
	}
	srv, err := view.New(o)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, addr, func(url string) {
		fmt.Fprintf(cmd.OutOrStdout(), "nexus view: serving %s\n  %s\n(Ctrl-C stops it)\n", h.Engine.Layout.Project, url)
		if open {
			openBrowser(logger, url)
		}
	})
}

// openBrowser hands the address to xdg-open, or says why it cannot.
func openBrowser(logger *log.Logger, url string) {
	p, err := exec.LookPath("xdg-open")
	if err != nil {
		logger.Printf("--open: xdg-open is not installed here; open the address above in a browser yourself")
		return
	}
	c := exec.Command(p, url)
	if err := c.Start(); err != nil {
		logger.Printf("--open: %s: %v; open the address above in a browser yourself", p, err)
		return
	}
	go c.Wait()
}
