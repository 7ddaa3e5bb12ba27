package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
)

func newHookCmd(a *app) *cobra.Command {
	var hostName, variant string
	var inPlugin, serve bool
	cmd := &cobra.Command{
		Use:   "hook [EVENT]",
		Short: "Handle one lifecycle event of a coding-agent host (JSON on stdin, the host's reply on stdout)",
		Long: `Handle one lifecycle event: read the host's JSON payload on stdin, run nexus's lifecycle
engine, and write the host's reply on stdout.

--host claude speaks Claude Code's command-hook protocol (SessionStart, UserPromptSubmit,
PreToolUse, PostToolUse, PostToolUseFailure, SubagentStart, SubagentStop, Stop, SessionEnd,
PreCompact, PostCompact); the event is taken from hook_event_name when EVENT is not given.
--host codex speaks Codex CLI's (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
SubagentStart, SubagentStop, SessionEnd; Stop, PermissionRequest, PreCompact, PostCompact and
Interrupt are accepted and need nothing); its state lives under harness id codex.
--host neutral takes nexus-core's abstract events (session_start, user_message,
subagent_spawn, subagent_complete, subagent_resume, pre_tool_use, post_tool_use,
session_end, context_compact) in the JSON shape of docs/hooks.md.
--host opencode answers the requests of the plugin "nexus install opencode" writes (one JSON
line each way, docs/opencode.md): the first request, or with --serve every request until
its input ends, keeping one engine for the project (the plugin's long-lived child).

The exit status is always 0. A payload nexus cannot use (invalid JSON, unknown event, missing
or mistyped field, over 10 MiB, nested over 64 levels) or a failure inside nexus prints one
line on stderr, logs it in .nexus/state/<harness-id>/nexus.log and lets the host proceed,
except for PreToolUse: a payload nexus cannot read, or a call it cannot check because the
distribution does not load, is always denied, and a failure inside nexus while handling it
denies it when gate.policy is fail-closed.

A configuration problem never switches nexus off: a key nexus does not know or a bad value
keeps that key's default, a file that cannot be parsed is left out, and the rest applies.
The session is told: the user in the host's message at session start and on the first event
after the problems change, Lead in the session's first context.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := hosts.Lookup(hostName)
			if err != nil {
				return usagef("%v", err)
			}
			if inPlugin {
				variant = "plugin"
			}
			a.host, a.hostEnv.Variant, a.lazyCore = h, variant, true
			// The session shows the configuration's problems (the
			// lifecycle's notice); a file that does not load is left
			// out, never nexus.
			a.hostDoor, a.quiet = true, true
			event := ""
			if len(args) == 1 {
				event = args[0]
			}
			r := host.Runner{
				Codec: h.Codec(),
				Event: event,
				Engine: func(ctx context.Context, ev lifecycle.Event) (*lifecycle.Engine, error) {
					return hookEngine(ctx, a, h, ev)
				},
				Policy: func() string { return hookPolicy(a) },
				FallbackLog: func(ctx context.Context, event string, ev lifecycle.Event, msg string) {
					hookProject(a, h, ev)
					if r, err := a.compose(); err == nil {
						r.LogWithoutEngine(ctx, event, ev.AgentID, msg)
					}
				},
				Stderr: cmd.ErrOrStderr(),
			}
			if srv, ok := h.(host.Server); ok {
				if err := srv.ServeHooks(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), r, serve); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "nexus hook: %v\n", err)
				}
				return nil
			}
			if serve {
				return usagef("--serve: the %s host sends one event per invocation", h.Name())
			}
			r.Run(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&hostName, "host", "claude", "the host protocol: "+strings.Join(hosts.Names(), " or "))
	cmd.Flags().BoolVar(&serve, "serve", false, "answer requests until input ends (a host whose plugin keeps nexus running: opencode)")
	// --managed marks entries written by `nexus install`; it changes nothing.
	var managed bool
	cmd.Flags().BoolVar(&managed, "managed", false, "marks a hook entry written by nexus install (no effect)")
	_ = cmd.Flags().MarkHidden("managed")
	// --variant names the host's own variant of its setup, whose agents,
	// skills and tools carry other names (Claude Code's "plugin": the nexus
	// plugin package); --plugin is --variant plugin, as the plugin
	// package's hooks say.
	cmd.Flags().StringVar(&variant, "variant", "", "the host's variant of its setup (claude: plugin)")
	_ = cmd.Flags().MarkHidden("variant")
	cmd.Flags().BoolVar(&inPlugin, "plugin", false, "the hook runs in the nexus plugin package (--variant plugin)")
	_ = cmd.Flags().MarkHidden("plugin")
	return cmd
}

// hookProject picks the project a hook event belongs to when --project is
// not given (compose.HookProject), before the composition root is built.
func hookProject(a *app, h host.Host, ev lifecycle.Event) {
	if a.projectFlag != "" || a.cr != nil {
		return
	}
	if p := compose.HookProject(h, os.Getenv, ev.Dir); p != "" {
		a.projectFlag = p
	}
}

// hookEngine builds the lifecycle engine for the event's project (the
// harness with its plugins reached per event): configuration and the
// distribution's manifest are loaded once; schemas compile only when a
// handler writes a state file that has one.
func hookEngine(ctx context.Context, a *app, h host.Host, ev lifecycle.Event) (*lifecycle.Engine, error) {
	hookProject(a, h, ev)
	r, err := a.compose()
	if err != nil {
		return nil, err
	}
	hs, err := r.Harness(ctx, compose.HarnessOptions{Plugins: compose.PluginsForHook})
	if err != nil {
		return nil, err
	}
	if hs.MemoryErr != nil {
		hs.Lifecycle.Log().Log(ctx, "warn", ev.Name, ev.AgentID, "memory features are off: "+hs.MemoryErr.Error())
	}
	return hs.Lifecycle, nil
}

// hookPolicy is gate.policy of this command line's configuration; without
// one, NEXUS_GATE_POLICY.
func hookPolicy(a *app) string {
	r, err := a.compose()
	if err != nil {
		return os.Getenv(config.EnvName("gate.policy"))
	}
	return r.GatePolicy()
}
