package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/host/setups"
	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// TestInstallFlagsFollowHostCapabilities: each host's install and
// uninstall offer exactly the flags its setup package says it supports
// (--statusline for a StatusLiner, --trust-hooks for a HookTruster,
// --plugin for a Packager), so no host's help offers a flag it refuses.
func TestInstallFlagsFollowHostCapabilities(t *testing.T) {
	root := commandTree()
	hosts := 0
	for _, h := range setups.All() {
		if _, ok := h.(installpkg.Installer); !ok {
			continue
		}
		hosts++
		_, statusLine := h.(installpkg.StatusLiner)
		_, trust := h.(installpkg.HookTruster)
		_, pkg := h.(installpkg.Packager)
		for _, verb := range []string{"install", "uninstall"} {
			sub, _, err := root.Find([]string{verb, h.Name()})
			if err != nil || sub.Name() != h.Name() {
				t.Fatalf("nexus %s %s: not found (%v)", verb, h.Name(), err)
			}
			for _, c := range []struct {
				flag string
				want bool
			}{
				{"statusline", statusLine && verb == "install"},
				{"trust-hooks", trust && verb == "install"},
				{"plugin", pkg},
				{"scope", true},
				{"dry-run", true},
				{"force", true},
				{"command", verb == "install"},
			} {
				if got := sub.Flags().Lookup(c.flag) != nil; got != c.want {
					t.Errorf("nexus %s %s --%s offered: %v, want %v", verb, h.Name(), c.flag, got, c.want)
				}
			}
		}
	}
	if hosts < 3 {
		t.Fatalf("only %d installable hosts", hosts)
	}
}

// TestInstallStatusLineRefusedAsUsage: a host without a status line does
// not know --statusline, which is a usage error (exit 2) naming the flag.
func TestInstallStatusLineRefusedAsUsage(t *testing.T) {
	for _, host := range []string{"codex", "opencode"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"install", host, "--statusline", "--dry-run"}, &out, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), "--statusline") {
			t.Errorf("install %s --statusline: exit %d, stderr %q; want a usage error naming the flag", host, code, errOut.String())
		}
	}
}
