#!/bin/sh
# bench-cli.sh — wall time per process of `nexus version` and `nexus validate`.
#
# The `cli` rows of the benchmark table (scripts/benchtable): nexus built as
# `make build` builds it, each command timed by internal/proctime (fork/exec,
# stdin from /dev/null, output discarded) RUNS times after a few checked
# warm-up runs (`nexus validate` gets a quarter of RUNS). Prints the
# median against its target, with p90, min and CPU time.
#
# Usage: scripts/bench-cli.sh [RUNS]       (default 200)
# Env:   CORE=<nexus-core dir>             (default: the one built into nexus)
set -eu
cd "$(dirname "$0")/.."
exec go run ./scripts/benchtable -only '^cli$' -runs "${1:-200}" -core "${CORE:-}"
