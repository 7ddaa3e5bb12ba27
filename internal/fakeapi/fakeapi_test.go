package fakeapi

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestHalves(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"ab", []string{"a", "b"}},
		{"héllo", []string{"hé", "llo"}},
		{"日本", []string{"日", "本"}},
		{"→", []string{"→"}},
	}
	for _, tc := range tests {
		got := Halves(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Halves(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, p := range got {
			if !utf8.ValidString(p) {
				t.Errorf("Halves(%q) cut a rune: %q", tc.in, got)
			}
		}
	}
}
