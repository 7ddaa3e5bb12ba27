#!/bin/sh
# Measures the wall time of one `nexus hook --host claude` process per event
# (PostToolUse, PreToolUse allowed and denied, UserPromptSubmit with the
# nx-plan skill body injected, UserPromptSubmit of `[d] ` × 20,000) and of
# `nexus statusline` over RUNS runs each (default 300), and fails when a
# median is over its budget (5 ms; 10 ms for UserPromptSubmit, 50 ms for the
# 20,000 tags), then TestHookLatencyLargeState: the hooks that read
# the task list on 1,000 tasks (10 ms) and SubagentStop's files_touched over
# a 100,000-line tool log (20 ms). The binary is built
# like `make build` (CGO_ENABLED=0, -trimpath -ldflags "-s -w"). Medians depend on machine
# load; the report prints the load average next to them. The distribution is
# the one built into nexus, or CORE=<dir> (passed as NEXUS_CORE_DIR).
#
#   scripts/bench-hooks.sh            # 300 runs per event
#   RUNS=1000 scripts/bench-hooks.sh
#   CORE=third_party/nexus-core/dist scripts/bench-hooks.sh
set -eu
cd "$(dirname "$0")/.."
case "${CORE:-}" in ""|/*) ;; *) CORE=$(pwd)/$CORE ;; esac
NEXUS_BENCH_HOOKS=1 NEXUS_BENCH_RUNS="${RUNS:-300}" NEXUS_BENCH_CORE="${CORE:-}" \
	go test ./cmd/nexus-full -run '^TestHookLatency' -count=1 -v "$@"
