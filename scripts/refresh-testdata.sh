#!/bin/sh
# Refreshes the copies the repository carries of two upstream inputs, or
# reports how they drifted from them:
#
#   third_party/nexus-core/dist      <- $SHARED/nexus-core-0.10.0  (embedded in nexus; tests use it)
#   plugins/decisions/testdata/nauro <- $SHARED/fixtures/nauro     (the Nauro golden cases)
#
#   scripts/refresh-testdata.sh           # copy, then list what changed (git status)
#   scripts/refresh-testdata.sh --check   # list the differences; exit 1 on drift, copy nothing
#
# SHARED defaults to ../shared beside the repository. Copies are exact
# (files added, changed and removed upstream follow), so run `go test` and
# `make run` after a refresh.
set -eu
cd "$(dirname "$0")/.."
SHARED=${SHARED:-$(cd .. && pwd)/shared}
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

drift=0
sync_dir() { # upstream repo-copy
	src=$1 dst=$2
	if [ ! -d "$src" ]; then
		echo "refresh-testdata: $src does not exist (set SHARED to the folder holding it)" >&2
		exit 2
	fi
	if [ "$check" = 1 ]; then
		if out=$(diff -r "$src" "$dst" 2>&1); then
			echo "up to date: $dst (= $src)"
		else
			echo "DRIFT: $dst differs from $src:"
			printf '%s\n' "$out" | sed 's/^/  /'
			drift=1
		fi
		return
	fi
	rm -rf "$dst"
	mkdir -p "$(dirname "$dst")"
	cp -Rp "$src" "$dst"
	echo "copied $src -> $dst"
}

sync_dir "$SHARED/nexus-core-0.10.0" third_party/nexus-core/dist
sync_dir "$SHARED/fixtures/nauro" plugins/decisions/testdata/nauro

if [ "$check" = 1 ]; then
	[ "$drift" = 0 ] || { echo "run scripts/refresh-testdata.sh to take the upstream copies" >&2; exit 1; }
	exit 0
fi
git status --short -- third_party/nexus-core/dist plugins/decisions/testdata/nauro
