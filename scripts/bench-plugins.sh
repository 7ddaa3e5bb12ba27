#!/bin/sh
# Measures what hosts pay for plugins, on the binary built like `make build`:
#   - `nexus mcp` from process start to its tools/list answer with five
#     plugins declared in the project (plus the built-in decision store);
#   - one `nexus hook --host claude` PreToolUse process with one subscribed
#     plugin (through the warm per-project hook server, and in-process for
#     reference) and with none (a plugin installed but not subscribed to the
#     tool, and a project without plugins);
#   - beside a plugin that never answers its handshake (1 s start deadline),
#     `nexus mcp` start to tools/list (budget: the deadline + 150 ms);
#   - a cancelled slow plugin call: notifications/cancelled to the plugin's
#     context ending (50 ms);
#   - `nexus mcp`'s exit at end of input with a plugin serving go-plugin's
#     GRPCController and with one that does not (500 ms);
# RUNS rounds (default 100), cases taking turns; medians are checked against
# their budgets (150 ms; 15 ms; no subscriber within 10% + 0.3 ms of the
# plain hook). Then the Go benchmarks: the store's start to its first
# answered call, and a tools/call round trip through it.
#
#   scripts/bench-plugins.sh
#   RUNS=300 scripts/bench-plugins.sh
set -eu
cd "$(dirname "$0")/.."
NEXUS_BENCH_PLUGINS=1 NEXUS_BENCH_RUNS="${RUNS:-100}" \
	go test ./cmd/nexus-full -run '^TestPluginLatency$' -count=1 -v "$@"
go test ./cmd/nexus-full -run '^$' -bench 'DecisionsPluginStart|MCPPluginToolCall' -benchtime "${BENCHTIME:-200x}" -count=1
