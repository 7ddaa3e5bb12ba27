package harness

import "testing"

func TestCallerRole(t *testing.T) {
	tests := []struct {
		in, role string
		ok       bool
	}{
		{"", "", true},
		{"lead", "", true},
		{"Lead", "", true},
		{"architect", "architect", true},
		{"nexus:architect", "architect", true},
		{"Engineer", "engineer", true},
		{":", "", false},
	}
	for _, tt := range tests {
		role, ok := CallerRole(tt.in)
		if role != tt.role || ok != tt.ok {
			t.Errorf("CallerRole(%q) = %q, %v; want %q, %v", tt.in, role, ok, tt.role, tt.ok)
		}
	}
}
