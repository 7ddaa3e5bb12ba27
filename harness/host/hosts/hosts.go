// Package hosts is the registry of the hosts nexus serves: the composition
// root (harness/compose) and the commands pick a host from it by name. A
// new host is a package under harness/host implementing host.Host, added
// to All; what installing nexus into it and checking that installation
// take (install.Installer, doctor.HostChecker) lives in its setup package,
// harness/host/<host>/setup, registered in harness/host/setups. This
// registry is linked into every hook process: a host package here imports
// only what a hook uses.
package hosts

import (
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/host/codex"
	"github.com/nexus-harness/nexus/harness/host/neutral"
	"github.com/nexus-harness/nexus/harness/host/opencode"
)

// All lists every host, in the order help texts name them.
func All() []host.Host {
	return []host.Host{claude.Host{}, codex.Host{}, opencode.Host{}, neutral.Host{}}
}

// Names lists the hosts' names.
func Names() []string {
	var out []string
	for _, h := range All() {
		out = append(out, h.Name())
	}
	return out
}

// Lookup returns the host of a name.
func Lookup(name string) (host.Host, error) {
	for _, h := range All() {
		if h.Name() == name {
			return h, nil
		}
	}
	return nil, fmt.Errorf("unknown host %q: use --host %s", name, strings.Join(Names(), " or --host "))
}
