#!/bin/sh
# Wire compatibility of the plugin protocol across versions: builds nexus,
# nexus-plugins and the example plugin shellguard at REV (default main, from
# a temporary git worktree) and from the working tree, then runs each nexus
# with each shellguard: `nexus plugin verify shellguard` (handshake, mutual
# TLS, Info, Configure) and a PreToolUse hook for `rm -rf /`, which the
# plugin must deny. A plugin built against an older SDK must keep working
# with a newer nexus, and the other way round; the script exits 1 when a
# pair does not.
#
#   scripts/plugin-compat.sh            # main against the working tree
#   scripts/plugin-compat.sh v0.3.0
set -eu
cd "$(dirname "$0")/.."
rev=${1:-main}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/src" "$rev" >/dev/null 2>&1
build() { # SRC OUT
	mkdir -p "$2"
	# nexus-full (the whole command line beside the front) where SRC has it.
	(cd "$1" && CGO_ENABLED=0 go build -trimpath -o "$2/nexus" ./cmd/nexus &&
		{ [ ! -d cmd/nexus-full ] || CGO_ENABLED=0 go build -trimpath -o "$2/nexus-full" ./cmd/nexus-full; } &&
		CGO_ENABLED=0 go build -trimpath -o "$2/nexus-plugins" ./cmd/nexus-plugins &&
		cd examples/plugins/shellguard && go build -trimpath -o "$2/shellguard" .)
}
build "$tmp/src" "$tmp/old"
build "$(pwd)" "$tmp/new"
fail=0
for host in old new; do
	for plug in old new; do
		p="$tmp/project-$host-$plug"
		mkdir -p "$p/.nexus/plugins/shellguard" "$p/home"
		cp "$tmp/$plug/shellguard" "$p/.nexus/plugins/shellguard/"
		sha=$(sha256sum "$tmp/$plug/shellguard" | cut -d' ' -f1)
		sed "s/^sha256: .*/sha256: \"$sha\"/" examples/plugins/shellguard/nexus-plugin.yaml >"$p/.nexus/plugins/shellguard/nexus-plugin.yaml"
		# No hook server: each hook starts the plugin itself and nothing outlives the script.
		printf 'gate:\n  unplanned_edit: "off"\nplugins:\n  hook_server: false\n' >"$p/.nexus/nexus.yaml"
		verdict=ok
		out=$(cd "$p" && HOME="$p/home" XDG_CONFIG_HOME="$p/home/.config" XDG_CACHE_HOME="$p/home/.cache" \
			"$tmp/$host/nexus" plugin verify shellguard 2>&1) || verdict="verify failed: $out"
		if [ "$verdict" = ok ]; then
			in='{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"cwd":"'"$p"'"}'
			out=$(cd "$p" && echo "$in" | HOME="$p/home" XDG_CONFIG_HOME="$p/home/.config" XDG_CACHE_HOME="$p/home/.cache" \
				"$tmp/$host/nexus" hook --host claude PreToolUse 2>&1) || true
			case $out in *'"permissionDecisionReason":"shellguard: '*) ;; *) verdict="rm -rf / not denied by the plugin: $out" ;; esac
		fi
		[ "$verdict" = ok ] || fail=1
		printf 'nexus %-3s shellguard %-3s  %s\n' "$host" "$plug" "$verdict"
	done
done
echo "(old = $rev, new = working tree)"
exit $fail
