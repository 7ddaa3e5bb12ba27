// Package harnessid holds the rule for harness ids, the namespace a harness
// writes under .nexus/state/<id>/ (nexus-core's harness_id,
// ^[a-z][a-z0-9-]*$). Configuration checks harness.id with it and the state
// layout refuses any other id; both import this package, neither the other.
package harnessid

import "fmt"

// Default is nexus's own namespace.
const Default = "nexus"

// Valid reports whether id matches ^[a-z][a-z0-9-]*$ (checked by hand:
// every hook process asks, and compiling the regexp would cost more than
// the check).
func Valid(id string) bool {
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if !(c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Check returns an error saying what is wrong with an invalid id.
func Check(id string) error {
	if !Valid(id) {
		return fmt.Errorf("harness id %q must match ^[a-z][a-z0-9-]*$", id)
	}
	return nil
}
