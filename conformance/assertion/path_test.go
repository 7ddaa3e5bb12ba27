package assertion

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want []Segment
		bad  string // substring of the error
	}{
		{in: "$", want: nil},
		{in: "$.a", want: []Segment{{Name: "a"}}},
		{in: "$.a.b[0]", want: []Segment{{Name: "a"}, {Name: "b"}, {Index: 0, IsIndex: true}}},
		{in: "$[0].a", want: []Segment{{Index: 0, IsIndex: true}, {Name: "a"}}},
		{in: "$.a[-1].b", want: []Segment{{Name: "a"}, {Index: -1, IsIndex: true}, {Name: "b"}}},
		{in: "$.cycles[-1].tasks[0].deps[0]", want: []Segment{{Name: "cycles"}, {Index: -1, IsIndex: true}, {Name: "tasks"}, {Index: 0, IsIndex: true}, {Name: "deps"}, {Index: 0, IsIndex: true}}},
		{in: "$.how_summary.architect", want: []Segment{{Name: "how_summary"}, {Name: "architect"}}},
		{in: "$._x9", want: []Segment{{Name: "_x9"}}},
		{in: "$.länge", want: []Segment{{Name: "länge"}}},
		{in: `$['a-b']`, want: []Segment{{Name: "a-b", Quoted: true}}},
		{in: `$["length"]`, want: []Segment{{Name: "length", Quoted: true}}},
		{in: `$['it\'s']`, want: []Segment{{Name: "it's", Quoted: true}}},
		{in: "a.b", bad: `must start with "$"`},
		{in: "", bad: `must start with "$"`},
		{in: "$.", bad: "expected a member name"},
		{in: "$.9a", bad: "expected a member name"},
		{in: "$..a", bad: "expected a member name"},
		{in: "$a", bad: "unexpected"},
		{in: "$[*]", bad: "not an array index"},
		{in: "$[1:2]", bad: "not an array index"},
		{in: "$[?(@.a)]", bad: "not an array index"},
		{in: "$[01]", bad: "not an array index"},
		{in: "$[", bad: "missing"},
		{in: "$['a'", bad: "expected \"]\""},
		{in: "$['a", bad: "unterminated"},
		{in: `$['\n']`, bad: "unsupported escape"},
		{in: "$[99999999999999999999]", bad: "out of range"},
		{in: "$.a b", bad: "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePath(tt.in)
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("ParsePath(%q) error = %v, want one containing %q", tt.in, err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(p.Segments(), tt.want) {
				t.Fatalf("ParsePath(%q) = %#v, want %#v", tt.in, p.Segments(), tt.want)
			}
			if p.String() != tt.in {
				t.Fatalf("String() = %q, want %q", p.String(), tt.in)
			}
		})
	}
}

func TestEval(t *testing.T) {
	doc := mustDecode(t, `{
		"a": {"b": [10, 20, 30], "length": "key"},
		"issues": [{"id": 1, "decision": null}, {"id": 2, "how_summary": {"architect": "x"}}],
		"empty": [],
		"s": "abc"
	}`)
	root := mustDecode(t, `[{"files_touched": ["x", "y"]}]`)
	tests := []struct {
		path    string
		doc     any
		want    string // compact JSON of the value, or Absent
		present bool
	}{
		{"$.a.b[0]", doc, "10", true},
		{"$.a.b[-1]", doc, "30", true},
		{"$.a.b[-3]", doc, "10", true},
		{"$.a.b[-4]", doc, Absent, false},
		{"$.a.b[3]", doc, Absent, false},
		{"$.a.b.length", doc, "3", true},
		{"$.a.length", doc, `"key"`, true}, // an object's "length" is a key
		{"$.empty.length", doc, "0", true},
		{"$.s.length", doc, Absent, false}, // only arrays have a length
		{"$.a.b['length']", doc, Absent, false},
		{"$.issues[0].decision", doc, "null", true},
		{"$.issues[1].decision", doc, Absent, false},
		{"$.issues[-1].how_summary.architect", doc, `"x"`, true},
		{"$.issues.id", doc, Absent, false},
		{"$.a[0]", doc, Absent, false},
		{"$.missing.deeper", doc, Absent, false},
		{"$.length", root, "1", true},
		{"$[0].files_touched.length", root, "2", true},
		{"$[0].files_touched[1]", root, `"y"`, true},
		{"$", root, `[{"files_touched":["x","y"]}]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := p.Eval(tt.doc)
			if got := Render(v, ok); ok != tt.present || got != tt.want {
				t.Fatalf("Eval(%s) = %s (present %v), want %s (present %v)", tt.path, got, ok, tt.want, tt.present)
			}
		})
	}
}

// canonical renders segments back to a path that must parse to the same
// segments.
func canonical(segs []Segment) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segs {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		default:
			q := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s.Name)
			b.WriteString("['" + q + "']")
		}
	}
	return b.String()
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$", "$.a", "$.a.b[0]", "$[-1].x.length", `$['a\'b'].c`, "$[", "$..", "$.a[01]", "$.ä[3]"} {
		f.Add(s)
	}
	doc := map[string]any{"a": []any{map[string]any{"b": "c"}, json.Number("1")}, "length": true}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("String() = %q, want %q", p.String(), s)
		}
		p.Eval(doc) // must not panic
		segs := p.Segments()
		q, err := ParsePath(canonical(segs))
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canonical(segs), s, err)
		}
		// The canonical form quotes every name, which turns ".length" into
		// ['length']; compare everything else.
		a, b := q.Segments(), segs
		if len(a) != len(b) {
			t.Fatalf("%q: %d segments, canonical %d", s, len(b), len(a))
		}
		for i := range a {
			if a[i].Name != b[i].Name || a[i].Index != b[i].Index || a[i].IsIndex != b[i].IsIndex {
				t.Fatalf("%q: segment %d = %#v, canonical %#v", s, i, b[i], a[i])
			}
		}
	})
}
