package pyjson

import "testing"

func TestFloatRepr(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{8.445, "8.445"}, {0, "0.0"}, {1, "1.0"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
		{1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {-2.5, "-2.5"}, {123.456, "123.456"},
		{1.5e-7, "1.5e-07"}, {0.391, "0.391"},
	} {
		if got := FloatRepr(tc.in); got != tc.want {
			t.Errorf("FloatRepr(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDumps(t *testing.T) {
	o := NewObject().Set("b", 1).Set("a", []any{"x", 2.0}).Set("c", NewObject()).Set("d", []any{})
	o.Set("b", "caf\u00e9 \U0001F680 \u2014")
	want := "{\n  \"b\": \"caf\\u00e9 \\ud83d\\ude80 \\u2014\",\n  \"a\": [\n    \"x\",\n    2.0\n  ],\n  \"c\": {},\n  \"d\": []\n}\n"
	if got := File(o); got != want {
		t.Errorf("File:\n%s\nwant\n%s", got, want)
	}
	if got := Dumps(NewObject().Set("k", "é").Set("n", nil), Options{}); got != `{"k": "é", "n": null}` {
		t.Errorf("compact = %s", got)
	}
}
