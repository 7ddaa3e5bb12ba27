package setup

import (
	"strings"
	"testing"

	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// warnedOfBothScopes reports whether an install's changes warn that nexus
// is in both scopes, naming how to keep one.
func warnedOfBothScopes(changes []installpkg.Change) bool {
	for _, ch := range changes {
		for _, n := range ch.Notes {
			if strings.Contains(n, "every event would reach nexus twice") && strings.Contains(n, "nexus uninstall codex --scope user") {
				return true
			}
		}
	}
	return false
}

// TestInstallWarnsOfBothScopes: installing in one scope while nexus's
// hooks are in the other's hooks.json says so at once, and how to keep
// one; with one scope left, no warning.
func TestInstallWarnsOfBothScopes(t *testing.T) {
	f := newFixture(t)
	h := Host{}
	changes, err := h.Install(f.request(installpkg.ScopeProject))
	if err != nil || warnedOfBothScopes(changes) {
		t.Fatalf("the first scope: %v, warned %v", err, warnedOfBothScopes(changes))
	}
	if changes, err = h.Install(f.request(installpkg.ScopeUser)); err != nil || !warnedOfBothScopes(changes) {
		t.Fatalf("user scope after the project's: %v, no warning in %+v", err, changes)
	}
	if _, err := h.Uninstall(f.request(installpkg.ScopeProject)); err != nil {
		t.Fatal(err)
	}
	if changes, err = h.Install(f.request(installpkg.ScopeUser)); err != nil || warnedOfBothScopes(changes) {
		t.Fatalf("one scope again: %v, warned %v", err, warnedOfBothScopes(changes))
	}
}
