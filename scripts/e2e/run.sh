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
status=0
$GO test -tags e2e -count=1 -timeout 15m -run '^TestE2E' ./... || status=$?
if [ -s "$NEXUS_E2E_FIGURES" ]; then
	echo
	cat "$NEXUS_E2E_FIGURES"
fi
echo "make e2e: $(( ($(date +%s%N) - start) / 1000000 )) ms wall (exit $status)"
exit $status
