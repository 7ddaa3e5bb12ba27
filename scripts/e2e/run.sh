#!/usr/bin/env bash
# make e2e: install the pinned real clients (scripts/e2e/setup.d/*.sh, each
# idempotent), then run every Go test named TestE2E* built with the e2e tag.
# Any failing check fails the run; an e2e test never skips for a missing
# prerequisite (it fails and says what to install). At the end it prints the
# figures the tests measured (NEXUS_E2E_FIGURES) and the run's wall time.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
start=$(date +%s%N)
for s in scripts/e2e/setup.d/*.sh; do
	[ -e "$s" ] || continue
	echo "e2e setup: $s"
	bash "$s"
done
mkdir -p .e2e
export NEXUS_E2E_FIGURES=$PWD/.e2e/figures.txt
rm -f "$NEXUS_E2E_FIGURES"
# Only the packages with e2e-tagged test files: building every other
# package's test binary would find nothing to run and cost a minute.
pkgs=$(grep -rlE --include='*_test.go' --exclude-dir=.e2e --exclude-dir=node_modules --exclude-dir=.git \
	'^//go:build .*\be2e\b' . | xargs -n1 dirname | sort -u)
if [ -z "$pkgs" ]; then
	echo "make e2e: no test file carries the e2e build tag" >&2
	exit 1
fi
# shellcheck disable=SC2086 # one argument per package
$GO vet -tags e2e $pkgs
status=0
# A Claude Code session mostly waits (on the fake model, on hooks): four at
# a time keep two cores busy.
# shellcheck disable=SC2086
$GO test -tags e2e -count=1 -parallel 4 -timeout 15m -run '^TestE2E' $pkgs || status=$?
if [ -s "$NEXUS_E2E_FIGURES" ]; then
	echo
	cat "$NEXUS_E2E_FIGURES"
fi
echo "make e2e: $(( ($(date +%s%N) - start) / 1000000 )) ms wall (exit $status)"
exit $status
