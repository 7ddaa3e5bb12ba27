#!/bin/sh
# fuzz.sh — run Go fuzz targets one after another, each for a short time.
#
#   scripts/fuzz.sh                        # every Fuzz* target in the module
#   scripts/fuzz.sh ./harness/tags         # every target of a package
#   scripts/fuzz.sh ./vocabulary:FuzzManifest ./harness/host/claude
#   FUZZTIME=1m scripts/fuzz.sh            # longer runs (default 10s each)
#
# Targets are found by their `func FuzzXxx(f *testing.F)` in *_test.go
# files, so new ones join without editing this script. A failing input is
# saved by `go test` under <package>/testdata/fuzz/<FuzzName>/ and the
# script stops with a non-zero status: fix the code, keep the file (it is
# the regression test from then on) and commit it. `make fuzz` runs this;
# `make test` runs the parser targets for FUZZ_SMOKE (1 s) each.
set -eu
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
GO=${GO:-go}

# targets_of DIR: the fuzz targets declared in one package directory.
targets_of() {
	grep -ho '^func Fuzz[A-Za-z0-9_]*(' "$1"/*_test.go 2>/dev/null | sed 's/^func //; s/($//' | sort -u
}

list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ "$#" -eq 0 ]; then
	for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./third_party/' | xargs -n1 dirname | sort -u); do
		for f in $(targets_of "$dir"); do echo "$dir $f"; done
	done >"$list"
else
	for sel in "$@"; do
		dir=${sel%%:*}
		if [ "$dir" != "$sel" ]; then
			echo "$dir ${sel#*:}"
		else
			found=$(targets_of "$dir")
			[ -n "$found" ] || { echo "fuzz.sh: no fuzz targets in $dir" >&2; exit 2; }
			for f in $found; do echo "$dir $f"; done
		fi
	done >"$list"
fi

n=$(wc -l <"$list")
echo "fuzzing $n targets for $FUZZTIME each"
# corpus DIR TARGET: the inputs saved for a target (to tell whether a failed
# run found a crasher).
corpus() {
	ls "$1/testdata/fuzz/$2" 2>/dev/null || true
}

# fuzz_once DIR TARGET: one run; 0 passed, 1 failed, 3 the Go 1.26 fuzz
# coordinator's shutdown race (go.dev/issue/75804, fixed in Go 1.27): the run
# ends with a bare "context deadline exceeded" at the -fuzztime boundary and
# no failing input is saved. That is not a finding, so the target runs again.
fuzz_once() {
	before=$(corpus "$1" "$2")
	if "$GO" test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" "$1" >"$list.out" 2>&1; then
		return 0
	fi
	if grep -q '^    context deadline exceeded$' "$list.out" && [ "$before" = "$(corpus "$1" "$2")" ]; then
		return 3
	fi
	return 1
}

while read -r dir target; do
	echo "== $dir $target"
	rc=0
	fuzz_once "$dir" "$target" || rc=$?
	if [ "$rc" -eq 3 ]; then
		echo "fuzz.sh: $target hit Go's fuzztime shutdown race (go.dev/issue/75804, no input saved); running it again"
		rc=0
		fuzz_once "$dir" "$target" || rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		cat "$list.out"
		echo "fuzz.sh: $target in $dir failed (output above); a failing input found by the fuzzer is saved in $dir/testdata/fuzz/$target/ — fix the code and commit that file" >&2
		rm -f "$list.out"
		exit 1
	fi
	grep -E '^(ok|PASS)|new interesting' "$list.out" | tail -n 1
done <"$list"
rm -f "$list.out"
