#!/usr/bin/env bash
# Debian's Chromium, for `nexus view`'s browser checks (harness/view
# TestE2EView*, driven through the DevTools protocol by chromedp). Nothing
# is downloaded but the distribution's own package; a browser already on
# PATH (chromium or chromium-headless-shell) is used as it is.
set -euo pipefail
for b in chromium chromium-headless-shell; do
	if command -v "$b" >/dev/null; then
		"$b" --version 2>/dev/null | sed -n 1p
		exit 0
	fi
done
command -v apt-get >/dev/null || {
	echo "e2e setup: no chromium on PATH and apt-get is not available; install Debian's chromium (or chromium-headless-shell) by hand" >&2
	exit 1
}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
command -v chromium >/dev/null || { echo "e2e setup: apt-get installed chromium but it is still not on PATH" >&2; exit 1; }
chromium --version 2>/dev/null | sed -n 1p
