package lazyregexp

import "testing"

func TestCompilesOnFirstUse(t *testing.T) {
	r := New(`^a+b$`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	if !r.Re().MatchString("aab") || r.Re().MatchString("b") {
		t.Fatal("wrong matches")
	}
}

func TestInvalidPatternPanicsOnUse(t *testing.T) {
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an invalid pattern")
		}
	}()
	r.Re()
}
