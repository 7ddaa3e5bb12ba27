#!/bin/sh
# Lists the repeated code that remains in nexus's non-test code (issue 16,
# docs/duplicates.md) with the `duplicates` command, and counts the pairs
# that are only import blocks.
#
# usage: scripts/duplicates.sh [REV]   (default HEAD)
#
# The tree of REV is copied to a scratch folder without _test.go files,
# generated code (*.pb.go, gen_*.go, files marked "Code generated ... DO NOT
# EDIT") and .proto files, so the rows speak of non-test code only.
set -eu

rev=${1:-HEAD}
if ! command -v duplicates >/dev/null 2>&1; then
	echo "duplicates.sh: the duplicates command is not on PATH" >&2
	exit 2
fi
repo=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$repo" archive "$rev" | tar -x -C "$tmp"
cd "$tmp"
find . -type f \( -name '*_test.go' -o -name '*.pb.go' -o -name '*.proto' -o -name 'gen_*.go' \) -exec rm -f {} +
grep -rlE '^// Code generated .* DO NOT EDIT\.$' --include='*.go' . | xargs -r rm -f

duplicates --most 200 --seconds 120 >"$tmp/rows.txt"

# importEnd prints the last line of a Go file's import block (0 if none).
importEnd() {
	awk '/^import \(/ { open = 1; next }
		open && /^\)/ { print NR; found = 1; exit }
		!open && /^import "/ { print NR; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

total=0
imports=0
while read -r id left tilde right rest; do
	case $id in D[0-9]*) ;; *) continue ;; esac
	total=$((total + 1))
	lf=${left%:*} lend=${left##*-}
	rf=${right%:*} rend=${right##*-}
	case $lf in *.go) ;; *) continue ;; esac
	case $rf in *.go) ;; *) continue ;; esac
	if [ "$lend" -le "$(importEnd "$lf")" ] && [ "$rend" -le "$(importEnd "$rf")" ]; then
		imports=$((imports + 1))
	else
		echo "$id $left $tilde $right $rest"
	fi
done <"$tmp/rows.txt"

head -n 1 "$tmp/rows.txt"
grep -E '^(\(\+|left out:|incomplete:)' "$tmp/rows.txt" || true
echo "non-test pairs: $total, import blocks only: $imports, others: $((total - imports)) (listed above)"
