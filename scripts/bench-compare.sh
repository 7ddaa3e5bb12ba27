#!/bin/sh
# Start-up of two builds side by side: `nexus version`, a PostToolUse hook
# and `nexus decision list`, median of RUNS processes each (default 200), the
# builds taking turns
# (scripts/benchcompare, timed by internal/proctime). REV (a commit, branch
# or tag) is built from a temporary git worktree; the working tree is the
# other build, measured with the vendored distribution in NEXUS_CORE_DIR as
# REV is, and again with its built-in one (when REV predates it, that row is
# the embedding's cost). Both are built as `make build` builds nexus.
#
#   scripts/bench-compare.sh REV [RUNS]
#   scripts/bench-compare.sh main~5
set -eu
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench-compare.sh REV [RUNS]}
runs=${2:-200}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/src" "$rev" >/dev/null 2>&1
# nexus-plugins beside nexus, as installed (`nexus decision` runs there),
# and nexus-full where the build has it (every command but the hot ones).
build() { mkdir -p "$2" && (cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$2/" ./cmd/nexus ./cmd/nexus-plugins $(test -d cmd/nexus-full && echo ./cmd/nexus-full)); }
build "$tmp/src" "$tmp/before"
build . "$tmp/after"
go run ./scripts/benchcompare -runs "$runs" \
	"$rev=$tmp/before/nexus" "working-tree=$tmp/after/nexus" "working-tree-builtin=$tmp/after/nexus,builtin"
