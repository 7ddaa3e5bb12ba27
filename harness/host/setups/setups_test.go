package setups_test

import (
	"testing"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/host/setups"
	"github.com/nexus-harness/nexus/harness/install"
)

// Every registered host is in setups.All, in the same order and under the
// same name; Claude Code's is its setup: install, the plugin package and
// the doctor's checks.
func TestSetupsFollowTheRegistry(t *testing.T) {
	all, lean := setups.All(), hosts.All()
	if len(all) != len(lean) {
		t.Fatalf("setups.All has %d hosts, hosts.All %d", len(all), len(lean))
	}
	for i, h := range all {
		if h.Name() != lean[i].Name() {
			t.Errorf("setups.All()[%d] is %s, hosts.All()[%d] %s", i, h.Name(), i, lean[i].Name())
		}
		if h.Name() != "claude" {
			continue
		}
		if _, ok := h.(install.Installer); !ok {
			t.Error("claude's setup is no install.Installer")
		}
		if _, ok := h.(install.Packager); !ok {
			t.Error("claude's setup is no install.Packager")
		}
		if _, ok := h.(doctor.HostChecker); !ok {
			t.Error("claude's setup is no doctor.HostChecker")
		}
	}
}
