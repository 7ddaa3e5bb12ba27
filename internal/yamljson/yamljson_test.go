package yamljson

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodeValues(t *testing.T) {
	src := `ts: 2026-11-25T10:00:00Z
day: 2026-11-25
1: one
true: yes
ver: "1.10"
num: 3
f: 1.5
nul: ~
list: [a, b]
base: &b {x: 1, y: 2}
derived:
  <<: *b
  y: 3
`
	d, err := Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ts": "2026-11-25T10:00:00Z", "day": "2026-11-25", "1": "one", "true": "yes",
		"ver": "1.10", "num": int64(3), "f": 1.5, "nul": nil, "list": []any{"a", "b"},
		"base":    map[string]any{"x": int64(1), "y": int64(2)},
		"derived": map[string]any{"x": int64(1), "y": int64(3)},
	}
	if !reflect.DeepEqual(d.Value, want) {
		t.Fatalf("got %#v\nwant %#v", d.Value, want)
	}
	if p := d.PosOf("/list/1"); p != (Pos{9, 11}) {
		t.Fatalf("pos of /list/1 = %v", p)
	}
	if p := d.PosOf("/ver"); p.Line != 5 {
		t.Fatalf("pos of /ver = %v", p)
	}
	if p := d.PosOf("/nope/deeper"); p != (Pos{1, 1}) {
		t.Fatalf("fallback pos = %v", p)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"duplicate key", "a: 1\na: 2\n", "2:1: duplicate key \"a\""},
		{"bad indentation", "a:\n  - x\n - y\n", "did not find expected key"},
		{"alias bomb", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", "too many values"},
		{"two documents", "a: 1\n---\nb: 2\n", "more than one YAML document"},
		{"tab", "a:\n\t- x\n", "2:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestEmptyDocument(t *testing.T) {
	d, err := Decode(nil)
	if err != nil || d.Value != nil {
		t.Fatalf("got %v, %v", d, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"a: 1", "- [x, {y: z}]", "a: &x [*x]", "<<: {a: 1}", "? [a]\n: b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Decode([]byte(s))
		if err == nil && d == nil {
			t.Fatal("nil doc without error")
		}
	})
}
