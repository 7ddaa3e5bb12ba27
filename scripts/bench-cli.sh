#!/usr/bin/env bash
# bench-cli.sh — wall time per process of `nexus version` and `nexus validate`.
#
# Builds cmd/nexus as `make build` does, then runs each command RUNS times
# (after WARMUP unmeasured runs) and prints min / median / p90 in milliseconds.
# Timing uses bash's $EPOCHREALTIME, so no extra process is started per run.
#
# Usage: scripts/bench-cli.sh [RUNS]       (default 100)
# Env:   CORE=<nexus-core dir>             (default ../shared/nexus-core-0.10.0)
#        WARMUP=<n>                        (default 10)
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${1:-100}
WARMUP=${WARMUP:-10}
CORE=${CORE:-$(cd .. && pwd)/shared/nexus-core-0.10.0}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -ldflags '-s -w' -o "$tmp/nexus" ./cmd/nexus
bin=$tmp/nexus

# An empty HOME/XDG_CONFIG_HOME and working directory: no user or project
# configuration takes part.
export HOME=$tmp XDG_CONFIG_HOME=$tmp/.config
unset NEXUS_CORE_DIR
cd "$tmp"

# measure NAME ARGS... — prints one result line.
measure() {
	local name=$1
	shift
	local i start end
	for ((i = 0; i < WARMUP; i++)); do "$bin" "$@" >/dev/null 2>&1 || true; done
	: >"$tmp/times"
	for ((i = 0; i < RUNS; i++)); do
		start=$EPOCHREALTIME
		"$bin" "$@" >/dev/null 2>&1 || true
		end=$EPOCHREALTIME
		# microseconds, without floating point in bash
		echo $(( (${end/./} - ${start/./}) )) >>"$tmp/times"
	done
	sort -n "$tmp/times" | awk -v name="$name" -v n="$RUNS" '
		{ t[NR] = $1 }
		END {
			med = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
			p90 = t[int(n * 0.9 + 0.5)]
			printf "%-28s runs=%d  min=%.2f ms  median=%.2f ms  p90=%.2f ms\n", name, n, t[1] / 1000, med / 1000, p90 / 1000
		}'
}

"$bin" validate --core "$CORE" >/dev/null || { echo "nexus validate --core $CORE fails; fix that first" >&2; exit 1; }
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
measure "nexus version" version
measure "nexus validate --core" validate --core "$CORE"
measure "nexus validate --core --json" validate --core "$CORE" --json
