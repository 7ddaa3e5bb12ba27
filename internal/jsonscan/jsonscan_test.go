package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func nested(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

func TestCheckDepthBoundary(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"scalar", `1`, true},
		{"empty object", `{}`, true},
		{"at the limit", nested(MaxDepth, ""), true},
		{"one over", nested(MaxDepth+1, ""), false},
		{"objects at the limit", strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth), true},
		{"objects one over", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), false},
		{"brackets in strings", `["` + strings.Repeat("[{", 1000) + `"]`, true},
		{"escaped quote in string", `["\"` + strings.Repeat("[", 100) + `"]`, true},
		{"escaped backslash ends string", `["\\"` + strings.Repeat(",[", MaxDepth) + strings.Repeat("]", MaxDepth) + `]`, false},
		{"siblings do not add up", "[" + strings.Repeat(nested(MaxDepth-1, "")+",", 100) + "1]", true},
		{"10,000 deep", nested(10000, ""), false},
		{"cut off deep", strings.Repeat("[", MaxDepth+1), false},
		{"cut off in a string", `["` + strings.Repeat("[", 100), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDepth([]byte(tc.doc), MaxDepth)
			var de *DepthError
			if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &de) || de.Limit != MaxDepth)) {
				t.Fatalf("CheckDepth = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "64 levels") {
				t.Errorf("message %q does not name the limit", err)
			}
		})
	}
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		name     string
		doc      string
		names    []string
		want     []string // "" = absent
		complete bool
		dup      string
	}{
		{"in order", `{"id":7,"method":"m","params":{"a":[1,{"b":"}"}]}}`, []string{"id", "method", "params"}, []string{"7", `"m"`, `{"a":[1,{"b":"}"}]}`}, true, ""},
		{"absent", `{"a":1}`, []string{"id"}, []string{""}, true, ""},
		{"case folds, last wins", `{"id":1,"ID":"x"}`, []string{"id"}, []string{`"x"`}, true, "id"},
		{"escaped name", `{"\u0069d":2}`, []string{"id"}, []string{"2"}, true, ""},
		{"white space", " {\n \"id\" :\t-0 , \"x\" : [ ] }", []string{"id", "x"}, []string{"-0", "[ ]"}, true, ""},
		{"exact number text", `{"id":12345678901234567890123}`, []string{"id"}, []string{"12345678901234567890123"}, true, ""},
		{"cut off after a member", `{"id":"abc","params":{"x":`, []string{"id", "params"}, []string{`"abc"`, ""}, false, ""},
		{"cut off inside a number", `{"id":1234`, []string{"id"}, []string{""}, false, ""},
		{"deeper than any decoder allows", `{"x":` + nested(20000, "") + `,"id":3}`, []string{"id"}, []string{"3"}, true, ""},
		{"not an object", `[1]`, []string{"id"}, []string{""}, false, ""},
		{"empty object", `{}`, []string{"id"}, []string{""}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, complete, dup := Pick([]byte(tc.doc), tc.names...)
			for i, m := range got {
				if string(m.Value) != tc.want[i] {
					t.Errorf("%s = %q, want %q", tc.names[i], m.Value, tc.want[i])
				}
				if m.Value != nil && tc.doc[m.Start:m.End] != string(m.Value) {
					t.Errorf("%s: Start/End %d/%d do not locate %q", tc.names[i], m.Start, m.End, m.Value)
				}
			}
			if complete != tc.complete || dup != tc.dup {
				t.Errorf("complete, dup = %v, %q; want %v, %q", complete, dup, tc.complete, tc.dup)
			}
		})
	}
}

// decoderDepth is the deepest nesting jsontext reads in a valid document.
func decoderDepth(t *testing.T, data []byte) int {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	deepest := 0
	for {
		if _, err := dec.ReadToken(); err != nil {
			if errors.Is(err, io.EOF) {
				return deepest
			}
			t.Fatalf("jsontext on valid JSON: %v", err)
		}
		deepest = max(deepest, dec.StackDepth())
	}
}

// FuzzScan: on any input CheckDepth and Pick do not fail; on valid JSON
// CheckDepth agrees with jsontext about the depth to the level, and Pick
// finds exactly the members encoding/json decodes.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"id":1,"method":"tools/call","params":{"arguments":{"a":[1,2,{"b":"]"}]}}}`,
		`[[["\"]"]]]`, `{"ID":1,"id":2}`, `"\\"`, `{"a":`, nested(70, `{"x":"y"}`), `{"\u00e9":1}`, `{"K":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		CheckDepth(data, MaxDepth)
		names := []string{"id", "method", "params", "k"}
		picked, complete, _ := Pick(data, names...)
		for _, m := range picked {
			if m.Value != nil && !bytes.Equal(data[m.Start:m.End], m.Value) {
				t.Fatalf("member at %d..%d is not its value", m.Start, m.End)
			}
		}
		if !json.Valid(data) {
			return
		}
		want := decoderDepth(t, data)
		for _, limit := range []int{want - 1, want} {
			if limit < 0 {
				continue
			}
			if err := CheckDepth(data, limit); (err == nil) != (want <= limit) {
				t.Fatalf("depth %d, limit %d: CheckDepth = %v", want, limit, err)
			}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			if complete {
				t.Fatalf("Pick read a complete object in %q, which is not one", data)
			}
			return
		}
		if !complete {
			t.Fatalf("Pick did not read the whole object %q", data)
		}
		var fields struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
			Params json.RawMessage `json:"params"`
			K      json.RawMessage `json:"k"`
		}
		if err := json.Unmarshal(data, &fields); err != nil {
			return // a member of the wrong type for RawMessage cannot happen; be safe
		}
		for i, w := range []json.RawMessage{fields.ID, fields.Method, fields.Params, fields.K} {
			if !bytes.Equal(picked[i].Value, w) {
				t.Fatalf("%s: Pick %q, encoding/json %q in %q", names[i], picked[i].Value, w, data)
			}
		}
	})
}

// BenchmarkCheckDepth: the depth check over a 4 MiB message of strings
// full of brackets and escapes, the worst case for its string scanning.
func BenchmarkCheckDepth(b *testing.B) {
	data := []byte(`{"a":"` + strings.Repeat(`[{\"\\`, 1<<20) + `"}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := CheckDepth(data, MaxDepth); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckDepthText: the usual case, long text with few escapes.
func BenchmarkCheckDepthText(b *testing.B) {
	data := []byte(`{"a":"` + strings.Repeat(`lorem ipsum [dolor] {sit} amet\n`, 1<<17) + `"}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := CheckDepth(data, MaxDepth); err != nil {
			b.Fatal(err)
		}
	}
}

func TestString(t *testing.T) {
	for doc, want := range map[string]string{
		`{"event":"pre_tool_use","x":` + nested(20000, "") + `}`: "pre_tool_use",
		`{"event":"a\u00e9","x":[}`:                              "aé",
		`{"event":5}`:                                            "",
		`{"other":"x"}`:                                          "",
		`{"event":"cut`:                                          "",
	} {
		if got := String([]byte(doc), "event"); got != want {
			t.Errorf("%.60s: %q, want %q", doc, got, want)
		}
	}
}
