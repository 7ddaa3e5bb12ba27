#!/usr/bin/env bash
# The Claude Code CLI pinned in scripts/e2e/claude-code (package-lock.json),
# installed into .e2e/claude-code for internal/e2e/claudecode. The npm
# package pulls the native binary for this platform through an optional
# dependency; its postinstall (install.cjs, local files only) copies it over
# the bin/claude.exe placeholder, and is run here when npm skipped scripts.
# 2.1.197 is the newest release that runs on Node 20 (later ones declare
# engines.node >= 22).
set -euo pipefail
cd "$(dirname "$0")/../../.."
exec scripts/e2e/lib/npm-pinned.sh scripts/e2e/claude-code claude-code sh -c \
	'node_modules/.bin/claude --version 2>/dev/null || { node node_modules/@anthropic-ai/claude-code/install.cjs && node_modules/.bin/claude --version; }'
