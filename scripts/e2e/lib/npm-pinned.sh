#!/usr/bin/env bash
# npm-pinned.sh SRC NAME CHECK...: install the npm packages pinned by
# SRC/package.json and SRC/package-lock.json into .e2e/NAME with `npm ci`
# (the lock file decides every version and checksum), copying the other
# files of SRC beside them. Nothing happens when .e2e/NAME already holds an
# install of the same files. CHECK (run in .e2e/NAME) must then succeed.
set -euo pipefail
src=$1 name=$2
shift 2
for tool in node npm; do
	command -v "$tool" >/dev/null || { echo "e2e setup: $tool is not on PATH; install Node.js 20+ with npm" >&2; exit 1; }
done
dst=.e2e/$name
stamp=$(cd "$src" && cat $(ls | sort) | sha256sum | cut -c1-16)
if [ -f "$dst/.installed" ] && [ "$(cat "$dst/.installed")" = "$stamp" ]; then
	exit 0
fi
rm -rf "$dst"
mkdir -p "$dst"
cp "$src"/* "$dst"/
(cd "$dst" && npm ci --no-audit --no-fund --loglevel=error)
(cd "$dst" && "$@")
echo "$stamp" >"$dst/.installed"
