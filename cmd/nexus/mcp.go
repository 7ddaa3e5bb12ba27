package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/mcpserver"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

type mcpFlags struct {
	host      string
	http      string
	nexusRoot string
	prefix    string
	agent     string
	only      string
	without   string
}

// mcpScope says which tools one `nexus mcp` serves: everything (""),
// only the bundled decision store's (--only decisions, what the "nauro"
// server entry runs, so agents see mcp__nauro__check_decision as with
// Nauro's own server), or everything but the store's (--without
// decisions, the "nexus" entry beside it).
type mcpScope string

const (
	scopeAll              mcpScope = ""
	scopeOnlyDecisions    mcpScope = "only-decisions"
	scopeWithoutDecisions mcpScope = "without-decisions"
)

// nauroInstructions tell the model what the store's tools are for.
const nauroInstructions = "This server keeps the project's architectural decisions (a Nauro store). " +
	"Call check_decision before adopting an approach, get_decision on each related decision, " +
	"and propose_decision to record a new one; get_context gives the project's context."

func newMCPCmd(a *app) *cobra.Command {
	var fl mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the nexus tools over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve the nexus-core tools (and any memory or plugin tools) to an MCP client.

By default the server speaks newline-delimited JSON-RPC on stdin/stdout: it answers nexus's own
requests in arrival order, runs plugin tool calls beside them (at most 8 at once), flushes each
answer (matched to its request by id), honours notifications/cancelled (the call's context, in
the plugin too, is cancelled and the request gets no answer), and exits at end of input once
every answer is written, so a batch can be piped in.
Nothing but protocol is ever written to stdout; diagnostics go to stderr.

With --http ADDR it serves streamable HTTP at http://ADDR/mcp. An address without a host
(":7777") listens on 127.0.0.1 only; --http "" uses mcp.http_addr. Every request must carry
"Authorization: Bearer <token>": the token is generated on first use, stored with mode 0600 at
mcp.token_file (default <user config dir>/nexus/mcp-token) and printed by "nexus mcp token".

Tools are named <mcp.tool_prefix><tool>, nx_plan_start by default. Plugin tools keep their own
names: the bundled decision store's check_decision, propose_decision, ... (decisions.enabled),
other plugins' as <plugin>_<tool> (see "nexus plugin list"). Plugins start before the first
answer and stop when the server does. The .nexus folder is the project's unless --nexus-root or
NEXUS_RUNTIME_ROOT (runtime.root) names another one.

--only decisions serves just the bundled decision store's tools, under the server name
"nauro" (what "nexus install claude" registers as the MCP server "nauro" when the store is
enabled, so agents see mcp__nauro__check_decision exactly as with Nauro's own server);
--without decisions serves everything else (the "nexus" entry beside it). Without either,
one server serves all tools, for hosts that want a single entry.

When the caller is known (--agent ROLE, or "nexus/agent_type" in a request's _meta), every
call goes through the capability gate, as the hooks do.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd, a, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.http, "http", "", "serve streamable HTTP on ADDR instead of stdio (\"\" = mcp.http_addr)")
	f.StringVar(&fl.nexusRoot, "nexus-root", "", "the .nexus folder to serve (overrides runtime.root / NEXUS_RUNTIME_ROOT)")
	f.StringVar(&fl.prefix, "tool-prefix", "", "prefix of the tool names (overrides mcp.tool_prefix)")
	f.StringVar(&fl.only, "only", "", "serve only these tools: \"decisions\" (the bundled decision store, as the MCP server \"nauro\")")
	f.StringVar(&fl.without, "without", "", "serve every tool but these: \"decisions\" (the store is then served by its own \"nexus mcp --only decisions\")")
	f.StringVar(&fl.agent, "agent", "", "the agent whose calls this server answers (a role such as architect, or lead): the capability gate applies to them")
	f.StringVar(&fl.host, "host", "", "the host this server serves ("+strings.Join(hosts.Names(), ", ")+"): its state lives under the host's harness id unless harness.id is set")
	cmd.AddCommand(&cobra.Command{
		Use:   "token",
		Short: "Print the bearer token `nexus mcp --http` requires (generated on first use)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.Config()
			if err != nil {
				return err
			}
			tok, path, created, err := mcpToken(cfg)
			if err != nil {
				return err
			}
			if created {
				fmt.Fprintf(cmd.ErrOrStderr(), "nexus: generated a new MCP token in %s\n", path)
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"token": tok, "file": path})
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	})
	return cmd
}

// mcpMemoryLimit is the soft limit of the Go heap of a long-lived
// `nexus mcp` (debug.SetMemoryLimit), unless GOMEMLIMIT says otherwise:
// answers on a large project are megabytes of short-lived buffers, and
// without a limit the heap grows to twice its peak before collecting
// them. The limit is soft: a larger live state still fits, collected more
// often.
const mcpMemoryLimit = 40 << 20

func runMCP(cmd *cobra.Command, a *app, fl mcpFlags) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(mcpMemoryLimit)
	}
	useHTTP := cmd.Flags().Changed("http")
	// On stdio, stdout is the protocol: anything else printing to it (a
	// library, a stray debug line) goes to stderr instead.
	proto := os.Stdout
	if !useHTTP {
		growPipe(proto)
		os.Stdout = os.Stderr
		defer func() { os.Stdout = proto }()
	}
	if fl.host != "" {
		h, err := hosts.Lookup(fl.host)
		if err != nil {
			return usagef("--host: %v", err)
		}
		a.host = h
	}
	// The MCP server a host starts goes on without a configuration file
	// that does not load (its problems go to stderr, which the host logs),
	// as the hooks do.
	a.hostDoor = true
	r, err := a.compose()
	if err != nil {
		return err
	}
	set, err := r.Settings()
	if err != nil {
		return err
	}
	scope, err := mcpScopeOf(fl)
	if err != nil {
		return err
	}
	if scope == scopeOnlyDecisions && !set.Decisions {
		return usagef("--only decisions: the decision store is turned off (decisions.enabled: false)")
	}
	caller, err := mcpCaller(fl.agent)
	if err != nil {
		return err
	}
	// The signal handler's context (main) ends the server gracefully, so
	// the plugins are always stopped (on Linux they also die with the
	// process if it is killed outright).
	ctx := cmd.Context()
	// The memory tools (nx_memory_save, nx_memory_gc) join the registry and
	// automatic gc runs after task_close when the configuration enables it.
	// Every plugin tool is served next to the nx_* tools: the built-in
	// decision store's under their own names (check_decision, ...), the
	// others as <plugin>_<tool> (harness.Engine.ServePlugins). They stop
	// when the server does.
	ho := compose.HarnessOptions{
		NexusRoot:   fl.nexusRoot,
		MemoryTools: true,
		OnAutoGC:    autoGCReport(os.Stderr),
		Plugins:     compose.PluginsServed,
		PluginLog:   stderrLogger{os.Stderr},
		HostStderr:  os.Stderr, // the plugin host's log; never stdout
	}
	switch scope {
	case scopeWithoutDecisions:
		// The store is served by its own server: do not start it here.
		ho.Builtin = func(m *pluginhost.Manifest) bool { return m.Name != decisionsapi.Name }
	case scopeOnlyDecisions:
		ho.Serve = func(t pluginhost.Tool) bool { return t.Plugin == decisionsapi.Name }
	}
	h, err := r.Harness(ctx, ho)
	if err != nil {
		return nexusRootUsage(err)
	}
	defer h.Close()
	if h.MemoryErr != nil {
		return h.MemoryErr
	}
	for _, line := range h.NotServed {
		fmt.Fprintf(os.Stderr, "nexus mcp: not served: %s\n", line)
	}
	e := h.Engine
	prefix := set.ToolPrefix
	if cmd.Flags().Changed("tool-prefix") {
		prefix = fl.prefix
	}
	logger := log.New(os.Stderr, "nexus mcp: ", 0)
	var served mcpserver.Engine = e
	opts := mcpserver.Options{Prefix: prefix, Version: version, Log: logger, Caller: caller}
	if scope == scopeOnlyDecisions {
		served = decisionsOnly{e}
		opts.Name, opts.Instructions = decisionsapi.ServerName, nauroInstructions
	}
	srv, err := mcpserver.New(served, opts)
	if err != nil {
		return usagef("%v", err)
	}
	if !useHTTP {
		// Plugin tools run beside other requests (a slow one holds up
		// nothing); nexus's own requests keep their arrival order.
		return mcpserver.ServeStdioWith(ctx, srv, os.Stdin, proto, mcpserver.StdioOptions{Parallel: mcpserver.ParallelTools(served)})
	}
	cfg, _ := r.Config()
	addr := fl.http
	if addr == "" {
		addr = cfg.String("mcp.http_addr")
	}
	addr, err = mcpserver.ListenAddr(addr)
	if err != nil {
		return usagef("--http: %v", err)
	}
	tok, path, created, err := mcpToken(cfg)
	if err != nil {
		return err
	}
	if created {
		logger.Printf("generated a bearer token in %s (print it with `nexus mcp token`)", path)
	}
	hh, err := mcpserver.HTTPHandler(srv, tok, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	if mcpserver.Exposed(addr) {
		logger.Printf("warning: %s accepts connections from other machines; the bearer token is the only protection (no TLS)", addr)
	}
	return mcpserver.ServeHTTP(ctx, addr, hh, func(bound string) {
		logger.Printf("serving MCP over streamable HTTP at http://%s%s (bearer token in %s)", bound, mcpserver.EndpointPath, path)
	})
}

// harnessFor builds the current project's harness (compose.Root.Harness)
// for a command; a .nexus root that is a file is a usage error when
// --nexus-root named it.
func harnessFor(ctx context.Context, a *app, o compose.HarnessOptions) (*compose.Harness, error) {
	r, err := a.compose()
	if err != nil {
		return nil, err
	}
	h, err := r.Harness(ctx, o)
	if err != nil {
		return nil, nexusRootUsage(err)
	}
	return h, nil
}

// nexusRootUsage makes a .nexus root that is a file a usage error: the
// flag (--nexus-root) or the variable (NEXUS_RUNTIME_ROOT) named it.
func nexusRootUsage(err error) error {
	if errors.Is(err, compose.ErrNexusRootNotFolder) {
		return usageError{err}
	}
	return err
}

// mcpCaller says who makes a tool call: the _meta member
// "nexus/agent_type" of the request (a role, "lead" or ""), else --agent.
// A known caller's calls go through the capability gate; without either
// the caller is unknown and only the hooks gate.
func mcpCaller(flagAgent string) (func(context.Context, mcp.CallToolRequest) (string, bool), error) {
	fixed, known := "", false
	if flagAgent != "" {
		if fixed, known = harness.CallerRole(flagAgent); !known {
			return nil, usagef("--agent %q is not an agent role (lowercase letters, digits and '-'), nor lead", flagAgent)
		}
	}
	return func(_ context.Context, req mcp.CallToolRequest) (string, bool) {
		if req.Params.Meta != nil {
			if v, ok := req.Params.Meta.AdditionalFields["nexus/agent_type"].(string); ok {
				if r, ok := harness.CallerRole(v); ok {
					return r, true
				}
			}
		}
		return fixed, known
	}, nil
}

func mcpScopeOf(fl mcpFlags) (mcpScope, error) {
	for _, v := range []struct{ flag, val string }{{"--only", fl.only}, {"--without", fl.without}} {
		if v.val != "" && v.val != decisionsapi.Name {
			return "", usagef("%s %q: the only tool set that can be named is %q (the bundled decision store)", v.flag, v.val, decisionsapi.Name)
		}
	}
	switch {
	case fl.only != "" && fl.without != "":
		return "", usagef("--only and --without cannot be combined")
	case fl.only != "":
		return scopeOnlyDecisions, nil
	case fl.without != "":
		return scopeWithoutDecisions, nil
	}
	return scopeAll, nil
}

// decisionsOnly is the engine as the "nauro" server shows it: the bundled
// decision store's tools and nothing else.
type decisionsOnly struct{ *harness.Engine }

func (d decisionsOnly) Tools() []*tools.Tool {
	var out []*tools.Tool
	for _, t := range d.Engine.Tools() {
		if t.Unprefixed && decisionsapi.IsTool(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// mcpToken loads the HTTP bearer token from mcp.token_file (created when
// missing), for `nexus mcp --http` and `nexus mcp token`.
func mcpToken(cfg *config.Config) (tok, path string, created bool, err error) {
	path, err = mcpserver.TokenFile(cfg.String("mcp.token_file"))
	if err != nil {
		return "", "", false, err
	}
	tok, created, err = mcpserver.LoadOrCreateToken(path)
	return tok, path, created, err
}
