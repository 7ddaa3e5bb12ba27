package pyjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseKeepsOrderAndTypesNumbers(t *testing.T) {
	v, err := Parse(`{"b":1,"a":{"z":[1.50,"x",null,true,-3,1e2,12345678901234567890],"y":{}},"b":2}`)
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Fatalf("keys = %v", got)
	}
	if b, _ := o.Get("b"); b != int64(2) {
		t.Fatalf("duplicate member: b = %#v, want the last value, int64(2)", b)
	}
	a, _ := o.Get("a")
	z, _ := a.(*Object).Get("z")
	// Python: 1.5 and 1e2 are floats, -3 an int; an integer beyond int64 is
	// a float here (Python keeps big ints; Nauro's files hold none).
	if want := []any{1.5, "x", nil, true, int64(-3), 100.0, 12345678901234567890.0}; !reflect.DeepEqual(z, want) {
		t.Fatalf("z = %#v, want %#v", z, want)
	}
	o.Set("c", 3).Set("b", 4)
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"b", "a", "c"}) || o.Len() != 3 {
		t.Fatalf("after edits keys = %v", got)
	}
	var seen []string
	for k := range o.All() {
		seen = append(seen, k)
	}
	if !reflect.DeepEqual(seen, o.Keys()) {
		t.Fatalf("All yields %v", seen)
	}
	if got := Dumps(o, Options{}); got != `{"b": 4, "a": {"z": [1.5, "x", null, true, -3, 100.0, 1.2345678901234567e+19], "y": {}}, "c": 3}` {
		t.Fatalf("round trip: %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{`{"a":1} x`, `{"a":`, `{1:2}`, `]`, ``, `[1,]`} {
		if v, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", in, v)
		}
	}
}

// Nesting is bounded at MaxDepth, the outermost value included.
func TestParseDepthLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, err := Parse(nest(MaxDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	for _, n := range []int{MaxDepth + 1, 10_000} {
		if _, err := Parse(nest(n)); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%d levels: %v", n, err)
		}
	}
	if _, err := Parse(`{"a":` + nest(MaxDepth) + `}`); !errors.Is(err, ErrTooDeep) {
		t.Errorf("%d levels inside an object: %v", MaxDepth+1, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[{"a":[1,{"b":null}]}]`, `"x"`, `{"a":1,"a":2}`, `1.5e3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err == nil && !json.Valid([]byte(s)) {
			t.Fatalf("accepted invalid JSON %q as %#v", s, v)
		}
		if err == nil {
			// What Parse accepts, Dumps writes back as valid JSON.
			if out := Dumps(v, Options{}); !json.Valid([]byte(out)) && !hasNonFinite(v) {
				t.Fatalf("Dumps(Parse(%q)) = %q is not JSON", s, out)
			}
		}
	})
}

// hasNonFinite reports whether v holds a float Python writes as Infinity
// (a JSON number too large for a float64), which is not JSON.
func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return x > 1.7976931348623157e308 || x < -1.7976931348623157e308
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case *Object:
		for _, e := range x.All() {
			if hasNonFinite(e) {
				return true
			}
		}
	}
	return false
}
