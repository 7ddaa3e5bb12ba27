// Package hostile holds the hostile-clone suite (issue 22): nexus run
// the way a user runs it in a repository an attacker prepared.
//
// Each row of the table (repos_test.go) is a repository: the base
// project plus the attacker's files, committed with git and cloned with
// the real git CLI into a folder of its own; what git cannot carry
// (FIFOs, 8 GiB sparse files) is made in the clone afterwards, as a
// build step or an unpacked archive would. Each row runs several tracks
// (entries_test.go), each in a fresh clone: install and uninstall in
// both scopes and as a plugin package with doctor --fix; the recorded
// Claude Code session of harness/host/claude (every hook event) with
// the status line; the gate (every write an architect may not make, and
// payloads nexus cannot parse, through both host protocols); and the
// tools (nexus mcp with every tool, the decision store alone, the
// decision, memory, tags, state, doctor, config, validate, plugin and
// core extract commands). A row of hostile input (prompts, deep and huge
// requests and payloads) runs against the base project.
//
// Every step is one nexus process, started through testenv.RunBounded
// (internal/testenv/rssrun) in a process group of its own. It fails on:
//
//   - time: running longer than 5 s (the group is killed at 5 s);
//   - rss: a peak resident set over 128 MiB (ru_maxrss of the process;
//     the group is killed as soon as VmHWM passes the limit);
//   - outside change: anything changed but the project's own files (the
//     step's may list; see entries_test.go for what each entry point may
//     write) — the clone's .git, outside/, home/ and the rest of the
//     project are compared, by lstat and content hash, before and after
//     every step, the repository it was cloned from (src/) before and
//     after the track, and /dev/zero and /dev/null by identity;
//   - outside read: content of outside/ (a canary) in what the step
//     printed or wrote;
//   - allowed write: a PreToolUse the gate must deny that was not denied
//     (no answer, a crash or a kill counts as allowed: the host proceeds);
//   - crash: a panic, a Go fatal error or death by a signal.
//
// A failure names the row, the track, the entry point and the rule:
// "nexus-fifo · session · hook 01-SessionStart-lead: time: …".
package hostile
