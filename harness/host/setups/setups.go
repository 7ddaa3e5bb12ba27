// Package setups is the registry of the hosts with their setup: what
// `nexus install`, `nexus uninstall` and `nexus doctor` ask of a host
// (install.Installer, install.Packager, doctor.HostChecker). A host keeps
// its setup in a package of its own, harness/host/<host>/setup, beside
// what a hook needs (harness/host/<host>, in the registry harness/host/hosts),
// so that a hook process, which links the hosts, links none of their
// installers and doctor checks (cmd/nexus's TestHotDeps).
package setups

import (
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	claudesetup "github.com/nexus-harness/nexus/harness/host/claude/setup"
	"github.com/nexus-harness/nexus/harness/host/codex"
	codexsetup "github.com/nexus-harness/nexus/harness/host/codex/setup"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/host/opencode"
	opencodesetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
)

// All returns every registered host, in the order of hosts.All, as its
// setup where it has one (a host.Host that may also implement
// install.Installer, install.Packager and doctor.HostChecker).
func All() []host.Host {
	var out []host.Host
	for _, h := range hosts.All() {
		out = append(out, withSetup(h))
	}
	return out
}

// withSetup returns h's setup, or h when it has none.
func withSetup(h host.Host) host.Host {
	switch v := h.(type) {
	case claude.Host:
		return claudesetup.Host{Host: v}
	case codex.Host:
		return codexsetup.Host{Host: v}
	case opencode.Host:
		return opencodesetup.Host{Host: v}
	}
	return h
}
