#!/usr/bin/env bash
# make e2e: install the pinned real clients (scripts/e2e/setup.d/*.sh, each
# idempotent), then run every Go test named TestE2E* built with the e2e tag.
# Any failing check fails the run; an e2e test never skips for a missing
# prerequisite (it fails and says what to install).
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
for s in scripts/e2e/setup.d/*.sh; do
	[ -e "$s" ] || continue
	echo "e2e setup: $s"
	bash "$s"
done
exec $GO test -tags e2e -count=1 -timeout 15m -run '^TestE2E' ./...
