package jsonorder

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

func TestParseKeepsOrder(t *testing.T) {
	v, err := Parse([]byte(`{"b":1,"a":{"z":[1.50,"x",null,true],"y":{}},"b":2}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Fatalf("keys = %v", got)
	}
	if b, _ := o.Get("b"); b != json.Number("2") {
		t.Fatalf("duplicate member: b = %v, want the last value", b)
	}
	a, _ := o.Get("a")
	z, _ := a.(*Object).Get("z")
	if !reflect.DeepEqual(z, []any{json.Number("1.50"), "x", nil, true}) {
		t.Fatalf("z = %#v", z)
	}
	o.Delete("b")
	o.Set("c", 3).Set("a", 4)
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"a", "c"}) || o.Len() != 2 {
		t.Fatalf("after edits keys = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{`{"a":1} x`, `{"a":`, `{1:2}`, `]`} {
		if _, err := Parse([]byte(in), nil); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

// Nesting is bounded at jsonscan.MaxDepth, the outermost value included.
func TestParseDepthLimit(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	if _, err := Parse(nest(jsonscan.MaxDepth), nil); err != nil {
		t.Fatalf("%d levels: %v", jsonscan.MaxDepth, err)
	}
	for _, n := range []int{jsonscan.MaxDepth + 1, 10_000} {
		var de *jsonscan.DepthError
		if _, err := Parse(nest(n), nil); !errors.As(err, &de) {
			t.Errorf("%d levels: %v", n, err)
		}
	}
}

func TestNumberHook(t *testing.T) {
	v, err := Parse([]byte(`[7]`), func(n json.Number) (any, error) { return n.Int64() })
	if err != nil || v.([]any)[0] != int64(7) {
		t.Fatalf("v = %#v, %v", v, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[{"a":[1,{"b":null}]}]`, `"x"`, `{"a":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse([]byte(s), nil)
		if err == nil && !json.Valid([]byte(s)) {
			t.Fatalf("accepted invalid JSON %q as %#v", s, v)
		}
	})
}
