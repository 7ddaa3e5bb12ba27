#!/bin/sh
# check-layering.sh: the dependency rules docs/architecture.md states, checked
# on the module's packages (go list) and sources. Part of `make lint`.
#
#   1. Only the composition root (harness/compose), the commands (cmd/...),
#      the test helper internal/testenv and internal/config/useviper (which
#      registers viper as its resolver) import internal/config: every other
#      package gets typed options.
#   2. The engine has one constructor outside tests: harness.New is called
#      in harness/compose alone.
#   3. A host's package (harness/host/<host>) is imported only by the host
#      registries (harness/host/hosts, harness/host/setups), its own setup
#      (harness/host/<host>/setup) and the commands; its setup only by
#      harness/host/setups and the commands.
#   4. The host-neutral packages name no host (Claude Code, Codex, OpenCode),
#      not even in comments.
#   5. The bundled decision store imports nothing of nexus's own but the
#      plugin SDK and its shared facts (plugins/decisions/decisionsapi).
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
mod=github.com/nexus-harness/nexus
fail=0
imports=$($GO list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)

bad=$(printf '%s\n' "$imports" | awk -v m="$mod" '
	{ for (i = 2; i <= NF; i++) if ($i == m"/internal/config") print $1 }' |
	grep -v -E "^$mod/(cmd/|harness/compose$|internal/config$|internal/config/useviper$|internal/testenv$)" || true)
if [ -n "$bad" ]; then
	echo "check-layering: these packages import internal/config (they must take typed options from harness/compose):"
	echo "$bad" | sed 's/^/  /'
	fail=1
fi

ctors=$(git grep -n -E '\bharness\.New\(' -- '*.go' ':!*_test.go' ':!internal/e2e/**' || true)
n=$(printf '%s' "$ctors" | grep -c . || true)
if [ "$n" -ne 1 ] || ! printf '%s\n' "$ctors" | grep -q '^harness/compose/'; then
	echo "check-layering: harness.New must be called once, in harness/compose; found $n:"
	printf '%s\n' "$ctors" | sed 's/^/  /'
	fail=1
fi

hosts=$(cd harness/host && ls -d */ | tr -d / | grep -v -x -e hosts -e setups)
for h in $hosts; do
	bad=$(printf '%s\n' "$imports" | awk -v p="$mod/harness/host/$h" '
		{ for (i = 2; i <= NF; i++) if ($i == p) print $1 }' |
		grep -v -E "^$mod/(cmd/|harness/host/hosts$|harness/host/setups$|harness/host/$h/setup$)" || true)
	bad=$bad$(printf '%s\n' "$imports" | awk -v p="$mod/harness/host/$h/setup" '
		{ for (i = 2; i <= NF; i++) if ($i == p) print $1 }' |
		grep -v -E "^$mod/(cmd/|harness/host/setups$)" || true)
	if [ -n "$bad" ]; then
		echo "check-layering: harness/host/$h (or its setup) is imported outside the registries and the commands:"
		echo "$bad" | sed 's/^/  /'
		fail=1
	fi
done

names=$(git grep -c -i -E '\b(claude|codex|opencode)\b' -- 'harness/lifecycle/*.go' 'harness/gate/*.go' \
	'harness/tools/*.go' 'harness/tags/*.go' 'harness/catalog/*.go' 'harness/install/*.go' 'memory/*.go' ':!*_test.go' || true)
if [ -n "$names" ]; then
	echo "check-layering: host names in host-neutral packages (count per file):"
	echo "$names" | sed 's/^/  /'
	fail=1
fi

bad=$(printf '%s\n' "$imports" | awk -v m="$mod" '$1 ~ "^"m"/plugins/decisions" {
	for (i = 2; i <= NF; i++) if (index($i, m"/") == 1 && index($i, m"/plugins/") != 1) print $1 " imports " $i }' || true)
if [ -n "$bad" ]; then
	echo "check-layering: the bundled decision store imports nexus's own packages:"
	echo "$bad" | sed 's/^/  /'
	fail=1
fi

if [ "$fail" -eq 0 ]; then
	echo "check-layering: ok (internal/config only in harness/compose, cmd and internal/testenv; one engine constructor; host packages behind the registry; no host names in host-neutral packages)"
fi
exit $fail
