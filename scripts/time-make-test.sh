#!/usr/bin/env bash
# time-make-test.sh — how long `make test` takes, step by step, as a fresh
# clone sees it (docs/performance.md, "The test suite").
#
#   scripts/time-make-test.sh              # make test at HEAD
#   scripts/time-make-test.sh COMMIT       # at another commit (or branch)
#   scripts/time-make-test.sh -packages [COMMIT]
#                                          # `go test -count=1 ./...` in each module,
#                                          # the ok/FAIL line of every package
#
# The commit is cloned into a new temporary folder: a new path, so the
# repository's own packages compile again (the build cache keys them by
# folder) while the module cache and the compiled dependencies stay warm.
# The test cache is cleaned first. Each command `make -n test` prints is run
# and timed: wall time, and CPU time (user + system, children included). The
# load average is printed before and after; on a shared machine it decides
# how far the figures can be trusted.
set -euo pipefail

mode=make
if [ "${1:-}" = "-packages" ]; then
	mode=packages
	shift
fi
rev=${1:-HEAD}
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")
dir=$(mktemp -d "${TMPDIR:-/tmp}/nexus-time-make-test-XXXXXX")
# The clone is removed unless a step failed: then it holds what the failure
# left (a fuzz target's failing input under testdata/fuzz/, the step's log).
keep=0
trap '[ "$keep" = 1 ] || rm -rf "$dir"' EXIT

git clone --quiet --no-checkout "$repo" "$dir/nexus"
cd "$dir/nexus"
git checkout --quiet "$commit"
go clean -testcache
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
echo "commit $(git log -1 --format='%h %s' | cut -c1-72)"
echo "$(date -u +%FT%TZ), $(nproc 2>/dev/null || echo '?') CPUs, load average at start: $(load)"

TIMEFORMAT='%R %U %S'
if [ "$mode" = packages ]; then
	status=0
	for m in . plugins/sdk examples/plugins/shellguard; do
		start=$(date +%s.%N)
		out=$(cd "$m" && go test -count=1 ./... 2>&1) || status=1
		grep -E '^(ok|FAIL|---)' <<<"$out" || true
		awk -v m="$m" -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "module %s: %.1f s wall\n", m, b - a }'
	done
	echo "load average at end: $(load)"
	exit "$status"
fi

total_wall=0
total_cpu=0
status=0
while IFS= read -r step; do
	log=$(mktemp "$dir/step-XXXXXX")
	rc=0
	t=$( { time bash -c "$step" >"$log" 2>&1 ; } 2>&1 ) || rc=$?
	read -r wall user sys <<<"$(tail -n 1 <<<"$t")"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
	printf '%7.1f s wall %7s s CPU  %s\n' "$wall" "$cpu" "$(cut -c1-100 <<<"$step")"
	total_wall=$(awk -v a="$total_wall" -v b="$wall" 'BEGIN { print a + b }')
	total_cpu=$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { print a + b }')
	if [ "$rc" -ne 0 ]; then
		cat "$log"
		keep=1
		echo "this step failed (exit $rc); the clone is kept in $dir/nexus, its log in $log" >&2
		status=1
		break
	fi
done < <(make -n test)
printf 'make test: %.1f s wall, %.1f s CPU; load average at end: %s\n' "$total_wall" "$total_cpu" "$(load)"
exit "$status"
