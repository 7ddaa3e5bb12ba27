package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func init() { registerHot("hook", newHookCmd) }

func newHookCmd(a *app) *cobra.Command {
	var hostName string
	var inPlugin bool
	cmd := &cobra.Command{
		Use:   "hook [EVENT]",
		Short: "Handle one lifecycle event of a coding-agent host (JSON on stdin, the host's reply on stdout)",
		Long: `Handle one lifecycle event: read the host's JSON payload on stdin, run nexus's lifecycle
engine, and write the host's reply on stdout.

--host claude speaks Claude Code's command-hook protocol (SessionStart, UserPromptSubmit,
PreToolUse, PostToolUse, PostToolUseFailure, SubagentStart, SubagentStop, Stop, SessionEnd,
PreCompact, PostCompact); the event is taken from hook_event_name when EVENT is not given.
--host neutral takes nexus-core's abstract events (session_start, user_message,
subagent_spawn, subagent_complete, subagent_resume, pre_tool_use, post_tool_use,
session_end, context_compact) in the JSON shape of docs/hooks.md.

The exit status is always 0. A payload nexus cannot use (invalid JSON, unknown event, missing
or mistyped field, over 10 MiB, nested over 64 levels) or a failure inside nexus prints one
line on stderr, logs it in .nexus/state/<harness-id>/nexus.log and lets the host proceed,
except for PreToolUse: a payload nexus cannot read, or a call it cannot check because the
configuration or distribution does not load, is always denied, and a failure inside nexus
while handling it denies it when gate.policy is fail-closed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ad, err := host.For(hostName)
			if err != nil {
				return usagef("%v", err)
			}
			event := ""
			if len(args) == 1 {
				event = args[0]
			}
			r := host.Runner{
				Adapter: ad,
				Event:   event,
				Engine: func(ctx context.Context, ev lifecycle.Event) (*lifecycle.Engine, error) {
					return hookEngine(a, ad.Name(), ev, inPlugin)
				},
				Policy: func() string { return hookPolicy(a) },
				FallbackLog: func(ctx context.Context, event string, ev lifecycle.Event, msg string) {
					hookFallbackLog(ctx, a, ad.Name(), event, ev, msg)
				},
				Stderr: cmd.ErrOrStderr(),
			}
			r.Run(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&hostName, "host", "claude", "the host protocol: claude or neutral")
	// --managed marks entries written by `nexus install`; it changes nothing.
	var managed bool
	cmd.Flags().BoolVar(&managed, "managed", false, "marks a hook entry written by nexus install (no effect)")
	_ = cmd.Flags().MarkHidden("managed")
	// --plugin marks the hooks of the nexus Claude Code plugin package,
	// whose agents, skills and tools carry the plugin's names.
	cmd.Flags().BoolVar(&inPlugin, "plugin", false, "the hook runs in the nexus Claude Code plugin")
	_ = cmd.Flags().MarkHidden("plugin")
	return cmd
}

// hookProject picks the project a hook event belongs to when --project is
// not given (harness.HookProject).
func hookProject(a *app, hostName string, ev lifecycle.Event) {
	if a.projectFlag != "" {
		return
	}
	if p := harness.HookProject(hostName, os.Getenv("CLAUDE_PROJECT_DIR"), ev.Dir); p != "" {
		a.projectFlag = p
	}
}

// hookEngine builds the lifecycle engine: configuration and the
// distribution's manifest are loaded once; schemas compile only when a
// handler writes a state file that has one.
func hookEngine(a *app, hostName string, ev lifecycle.Event, inPlugin bool) (*lifecycle.Engine, error) {
	hookProject(a, hostName, ev)
	a.lazyCore = true
	s := harness.Setup{
		Host:               hostName,
		Plugins:            newHookPlugins(a),
		PluginTool:         hookPluginTool(a),
		MemoryPolicyOnNeed: true,
	}
	if hostName == "claude" {
		s.Configure = func(o *lifecycle.Options) {
			home, _ := os.UserHomeDir()
			claude.Configure(o, o.Store.L.Project, home, os.Getenv("CLAUDE_PLUGIN_ROOT"), inPlugin)
		}
	}
	h, err := assembleFor(a, "", s)
	if err != nil {
		return nil, err
	}
	if h.MemoryErr != nil {
		h.Lifecycle.Log().Log(context.Background(), "warn", ev.Name, ev.AgentID, "memory features are off: "+h.MemoryErr.Error())
	}
	return h.Lifecycle, nil
}

// hookPolicy is harness.GatePolicy of this command line's configuration.
func hookPolicy(a *app) string {
	cfg, err := a.Config()
	if err != nil {
		cfg = nil
	}
	return harness.GatePolicy(cfg)
}

// hookFallbackLog writes nexus.log when no engine could be built
// (harness.LogWithoutEngine).
func hookFallbackLog(ctx context.Context, a *app, hostName, event string, ev lifecycle.Event, msg string) {
	hookProject(a, hostName, ev)
	proj, err := a.Project()
	if err != nil {
		return
	}
	cfg, err := a.Config()
	if err != nil {
		cfg = nil
	}
	harness.LogWithoutEngine(ctx, cfg, proj, event, ev.AgentID, msg)
}
