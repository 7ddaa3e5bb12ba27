#!/usr/bin/env bash
# The Claude Code CLI pinned in scripts/e2e/claude-code (package-lock.json),
# installed into .e2e/claude-code for internal/e2e/claudecode. Its npm
# package pulls the native binary for this platform through an optional
# dependency. 2.1.197 is the newest release that runs on Node 20 (later
# ones declare engines.node >= 22).
set -euo pipefail
cd "$(dirname "$0")/../../.."
exec scripts/e2e/lib/npm-pinned.sh scripts/e2e/claude-code claude-code node_modules/.bin/claude --version
