package main

import (
	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
)

func newHookCmd(a *app) *cobra.Command {
	var ha hot.HookArgs
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
			if len(args) == 1 {
				ha.Event = args[0]
			}
			return hot.Hook(cmd.Context(), a.globals(), ha, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addFlags(cmd.Flags(), hot.HookFlags(&ha))
	return cmd
}
