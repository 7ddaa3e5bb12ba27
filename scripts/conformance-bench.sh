#!/bin/sh
# Wall-clock medians of `nexus conformance`: the full in-process run and the
# tool cases against `nexus mcp` (one server process per case).
#
#   scripts/conformance-bench.sh [RUNS] [CORE]
#
# RUNS defaults to 11, CORE to ../shared/nexus-core-0.10.0. Set TMPDIR to
# measure with scratch projects somewhere other than the default
# (/dev/shm when writable).
set -eu

runs=${1:-11}
root=$(cd "$(dirname "$0")/.." && pwd)
core=${2:-$root/../shared/nexus-core-0.10.0}
core=$(cd "$core" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/nexus" ./cmd/nexus)
bin=$work/nexus

# median RUNS CMD...: prints the median wall time in seconds of RUNS runs;
# any run that does not exit 0 aborts the script.
median() {
	n=$1
	shift
	i=0
	: >"$work/times"
	while [ "$i" -lt "$n" ]; do
		start=$(date +%s%N)
		"$@" >"$work/out" 2>&1 || { cat "$work/out"; echo "run failed: $*" >&2; exit 1; }
		end=$(date +%s%N)
		echo $(((end - start) / 1000)) >>"$work/times"
		i=$((i + 1))
	done
	sort -n "$work/times" | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.3f s (min %.3f, max %.3f, %d runs)\n", m/1e6, a[1]/1e6, a[NR]/1e6, NR}'
	tail -n 1 "$work/out"
}

echo "in-process:          $(median "$runs" "$bin" conformance --core "$core" | tr '\n' ' ')"
echo "--target nexus mcp:  $(median "$runs" "$bin" conformance --core "$core" --target "$bin" mcp | tr '\n' ' ')"
