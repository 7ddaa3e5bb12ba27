#!/bin/sh
# Wall-clock medians of `nexus conformance`: the full in-process run and the
# tool cases against `nexus mcp` (one server process per case).
#
#   scripts/conformance-bench.sh [RUNS] [CORE]
#
# The `conformance` rows of the benchmark table (scripts/benchtable), timed
# by internal/proctime. RUNS (default 11) in-process runs, half as many
# --target runs; CORE defaults to the one built
# into nexus. Set TMPDIR to
# measure with scratch projects somewhere other than the default
# (/dev/shm when writable).
set -eu
cd "$(dirname "$0")/.."
core=${2:-}
exec go run ./scripts/benchtable -only '^conformance$' -conf-runs "${1:-11}" -core "$core"
