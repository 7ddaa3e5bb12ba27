package pytext

import "testing"

func TestPythonSemantics(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"strip file separators", Strip("\x1c\x1d a b \u00a0\u3000"), "a b"},
		{"rstrip", RStrip("x \n\t"), "x"},
		{"lower dotted I", Lower("İ"), "i\u0307"},
		{"lower final sigma", Lower("ΟΔΟΣ ΣΟΦΙΑΣ"), "οδος σοφιας"},
		{"lower lone sigma", Lower("Σ"), "σ"},
		{"lower sharp s", Lower("STRAßE"), "straße"},
		{"repr plain", Repr("070"), "'070'"},
		{"repr quote", Repr("it's"), `"it's"`},
		{"repr both quotes", Repr(`it's "x"`), `'it\'s "x"'`},
		{"repr control", Repr("a\tb\x01\u200b"), `'a\tb\x01\u200b'`},
		{"head", Head("héllo", 2), "hé"},
		{"truncate", Truncate("abcdef", 4), "abc…"},
		{"truncate short", Truncate("abc", 4), "abc"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if f := Fields(" a\x1fb  c "); len(f) != 3 {
		t.Errorf("Fields = %q", f)
	}
	for _, tc := range []struct {
		r                rune
		digit, decimal   bool
		value, wordchars int
	}{
		{'7', true, true, 7, 1}, {'٣', true, true, 3, 1}, {'²', true, false, -1, 1}, {'①', true, false, -1, 1},
		{'x', false, false, -1, 1}, {'_', false, false, -1, 1}, {'\u0301', false, false, -1, 0}, {'𝟗', true, true, 9, 1},
	} {
		if IsDigit(tc.r) != tc.digit || IsDecimal(tc.r) != tc.decimal || DecimalValue(tc.r) != tc.value {
			t.Errorf("%q: isdigit=%v isdecimal=%v value=%d", tc.r, IsDigit(tc.r), IsDecimal(tc.r), DecimalValue(tc.r))
		}
		if IsWord(tc.r) != (tc.wordchars == 1) {
			t.Errorf("%q: IsWord=%v", tc.r, IsWord(tc.r))
		}
	}
	if !IsSpace('\x85') || IsSpace('\u200b') {
		t.Error("IsSpace disagrees with str.isspace")
	}
}
