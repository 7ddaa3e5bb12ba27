package harnessid

import (
	"regexp"
	"testing"
)

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"nexus": true, "claude-nexus": true, "a": true, "a1-2": true,
		"": false, "1a": false, "-a": false, "A": false, "a_b": false, "a.b": false, "é": false, "a b": false,
	} {
		if got := Valid(id); got != want {
			t.Errorf("Valid(%q) = %v, want %v", id, got, want)
		}
		if (Check(id) == nil) != want {
			t.Errorf("Check(%q) = %v", id, Check(id))
		}
	}
}

// FuzzValid holds the hand-written check to nexus-core's pattern.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"nexus", "a-1", "", "A", "-", "a\n"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	f.Fuzz(func(t *testing.T, id string) {
		if Valid(id) != re.MatchString(id) {
			t.Fatalf("Valid(%q) = %v, the pattern says %v", id, Valid(id), re.MatchString(id))
		}
	})
}
