#!/usr/bin/env bash
# The Codex CLI pinned in scripts/e2e/codex (package-lock.json), installed
# into .e2e/codex for internal/e2e/codex. The npm package is a small Node
# launcher (bin/codex.js); the static Rust binary for this platform arrives
# through an optional dependency (@openai/codex-linux-x64 is an alias of
# @openai/codex@<version>-linux-x64, vendor/<triple>/codex/codex) and there is
# no install script. The check runs the binary through the launcher.
set -euo pipefail
cd "$(dirname "$0")/../../.."
exec scripts/e2e/lib/npm-pinned.sh scripts/e2e/codex codex node_modules/.bin/codex --version
