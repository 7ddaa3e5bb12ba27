package setup_test

import (
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/host/opencode/setup"
	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// warnedOfBothScopes reports whether an install's changes warn that the
// plugin is in both scopes, naming how to keep one.
func warnedOfBothScopes(changes []installpkg.Change) bool {
	for _, ch := range changes {
		for _, n := range ch.Notes {
			if strings.Contains(n, "every event would reach nexus twice") && strings.Contains(n, "nexus uninstall opencode --scope user") {
				return true
			}
		}
	}
	return false
}

// TestInstallWarnsOfBothScopes: installing in one scope while the nexus
// plugin is in the other's config folder says so at once, and how to keep
// one; with one scope left, no warning.
func TestInstallWarnsOfBothScopes(t *testing.T) {
	req, _, _ := installReq(t, installpkg.ScopeUser)
	h := setup.Host{}
	changes, err := h.Install(req)
	if err != nil || warnedOfBothScopes(changes) {
		t.Fatalf("the first scope: %v, warned %v", err, warnedOfBothScopes(changes))
	}
	req.Scope = installpkg.ScopeProject
	if changes, err = h.Install(req); err != nil || !warnedOfBothScopes(changes) {
		t.Fatalf("project scope after the user's: %v, no warning in %+v", err, changes)
	}
	req.Scope = installpkg.ScopeUser
	if _, err := h.Uninstall(req); err != nil {
		t.Fatal(err)
	}
	req.Scope = installpkg.ScopeProject
	if changes, err = h.Install(req); err != nil || warnedOfBothScopes(changes) {
		t.Fatalf("one scope again: %v, warned %v", err, warnedOfBothScopes(changes))
	}
}
