#!/usr/bin/env bash
# The OpenCode CLI pinned in scripts/e2e/opencode (package-lock.json),
# installed into .e2e/opencode for internal/e2e/opencode, and Debian's
# ripgrep: OpenCode's grep, glob and skill tools run `rg` from PATH.
# The npm package brings the native binary for this platform through an
# optional dependency (opencode-linux-x64); its postinstall (postinstall.mjs,
# local files only) links it over the bin/opencode.exe placeholder, and is
# run here when npm skipped scripts. docs/opencode-notes.md has the details.
# The lock file lists every platform package opencode-ai declares. The
# registry it was made against carries 1.18.33 only for linux-x64 and
# linux-x64-baseline, so the other entries (version, os, cpu, libc) were
# written by hand without an integrity: npm ci skips them on glibc x64
# without a fetch, and on another platform would fetch them unchecked.
set -euo pipefail
cd "$(dirname "$0")/../../.."
if ! command -v rg >/dev/null; then
	command -v apt-get >/dev/null || {
		echo "e2e setup: rg (ripgrep) is not on PATH and apt-get is not available; install ripgrep by hand" >&2
		exit 1
	}
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends ripgrep
	command -v rg >/dev/null || { echo "e2e setup: apt-get installed ripgrep but rg is still not on PATH" >&2; exit 1; }
fi
rg --version | sed -n 1p
exec scripts/e2e/lib/npm-pinned.sh scripts/e2e/opencode opencode sh -c \
	'node_modules/.bin/opencode --version 2>/dev/null || { node node_modules/opencode-ai/postinstall.mjs && node_modules/.bin/opencode --version; }'
