package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/tools"
)

// TestIntegersAreDecidedOnTheText (issue 22.9): a number kept as its text
// is an integer when the text's exact value is a whole number (JSON
// Schema's rule: 1.0 and 1e2 are integers), whatever a float64 would
// round it to. The tool sees the canonical integer.
func TestIntegersAreDecidedOnTheText(t *testing.T) {
	const safeMsg = `must be an integer from -9007199254740991 to 9007199254740991 (what a JSON number carries exactly), got `
	for _, c := range []struct {
		text string
		want any    // what the tool sees for an integer parameter
		err  string // else the refusal
	}{
		{"3", json.Number("3"), ""},
		{"1.0", json.Number("1"), ""},
		{"1e2", json.Number("100"), ""},
		{"100E-2", json.Number("1"), ""},
		{"-0", json.Number("0"), ""},
		{"0.0e5", json.Number("0"), ""},
		{"9007199254740991", json.Number("9007199254740991"), ""},
		{"-9007199254740991", json.Number("-9007199254740991"), ""},
		{"90071992547409910e-1", json.Number("9007199254740991"), ""},
		{"1.5", nil, "must be an integer, got number"},
		{"1e-400", nil, "must be an integer, got number"},
		{"1.0000000000000001", nil, "must be an integer, got number"},
		{"0.1e1000000000000000000000", nil, safeMsg + "0.1e1000000000000000000000"},
		{"1e-99999999999999999999", nil, "must be an integer, got number"},
		{"9007199254740992", nil, safeMsg + "9007199254740992"},
		{"9007199254740993", nil, safeMsg + "9007199254740993"},
		{"12345678901234567890123", nil, safeMsg + "12345678901234567890123"},
		{"1e309", nil, safeMsg + "1e309"},
	} {
		t.Run(c.text, func(t *testing.T) {
			var got map[string]any
			e := bare(testTool(probeSchema, func(args map[string]any) (map[string]any, error) {
				got = args
				return map[string]any{}, nil
			}))
			args, err := e.DecodeArgs("probe", []byte(`{"n":`+c.text+`}`))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.CallTool(context.Background(), "probe", args)
			if c.err != "" {
				if err == nil || err.Error() != `parameter "n" `+c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got["n"], c.want) {
				t.Fatalf("tool saw %#v (%v), want %#v", got["n"], err, c.want)
			}
		})
	}
	// A number parameter takes what a float64 holds, and nothing it would
	// read as infinite or as 0.
	for text, want := range map[string]any{"2.5": 2.5, "1e2": json.Number("100"), "-1.5e-300": -1.5e-300,
		"1e309": "must be a number a 64-bit float holds", "-1e-400": "must be a number a 64-bit float holds"} {
		var got map[string]any
		e := bare(testTool(probeSchema, func(args map[string]any) (map[string]any, error) {
			got = args
			return map[string]any{}, nil
		}))
		args, _ := e.DecodeArgs("probe", []byte(`{"x":`+text+`}`))
		_, err := e.CallTool(context.Background(), "probe", args)
		if msg, ok := want.(string); ok {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("x %s: err = %v, want %q", text, err, msg)
			}
		} else if err != nil || !reflect.DeepEqual(got["x"], want) {
			t.Errorf("x %s: tool saw %#v (%v), want %#v", text, got["x"], err, want)
		}
	}
}

// TestDecodeArgsRefusesBeforeDecoding (issue 22.10): unknown parameters and
// oversized arrays and objects are refused on the text, for nexus's tools
// and plugin tools alike, with the messages the decoded check gives.
func TestDecodeArgsRefusesBeforeDecoding(t *testing.T) {
	plugin := &tools.Tool{Name: "plug",
		Handle: func(context.Context, *tools.Env, map[string]any) (*tools.Result, error) { return &tools.Result{}, nil }, Plugin: "probe",
		Params: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"list":{"type":"array"},"m":{"type":"object"}}}`)}
	e := bare(testTool(probeSchema, func(map[string]any) (map[string]any, error) { return map[string]any{}, nil }), plugin)
	items := func(n int, v string) string { return "[" + strings.TrimSuffix(strings.Repeat(v+",", n), ",") + "]" }
	members := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":1`, i)
		}
		return "{" + b.String() + "}"
	}
	for _, c := range []struct {
		name, tool, args, err string
	}{
		{"plugin: unknown parameter", "plug", `{"q":"x","huge":` + items(100000, "1") + `}`, `unknown parameter "huge" (this tool takes: list, m, q)`},
		{"own: unknown parameter", "probe", `{"n":1,"zz":[1]}`, `unknown parameter "zz" (this tool takes: either, ids, m, n, ok, s, x)`},
		{"many unknown", "probe", members(20), `unknown parameter "k0"`},
		{"items at the limit", "plug", `{"list":` + items(MaxItems, "1") + `}`, ""},
		{"items over the limit", "plug", `{"list":` + items(MaxItems+1, `{"a":[1]}`) + `}`, `parameter "list" has 1001 items; the limit is 1000`},
		{"nested items over", "plug", `{"list":[1,[` + items(1500, "[]") + `]]}`, `parameter "list[1][0]" has 1500 items; the limit is 1000`},
		{"members over the limit", "plug", `{"m":` + members(MaxItems+1) + `}`, `parameter "m" has 1001 members; the limit is 1000`},
		{"own: items over the limit", "probe", `{"ids":` + items(1200, "1") + `}`, `parameter "ids" has 1200 items; the limit is 1000`},
		{"not an object", "plug", `[1]`, "the arguments must be a JSON object"},
		{"too deep", "plug", `{"list":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "nested deeper than the limit of 64 levels"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.DecodeArgs(c.tool, []byte(c.args))
			var te *tools.Error
			if c.err == "" {
				if err != nil {
					t.Fatalf("refused: %.300v", err)
				}
				return
			}
			if !errors.As(err, &te) || !strings.Contains(te.Message, c.err) {
				t.Fatalf("err = %.300v, want %q", err, c.err)
			}
		})
	}
}

// FuzzParseDecimal: parseDecimal agrees with math/big on integer-ness, the
// safe range and the canonical text of every number it accepts whose
// exponent big can handle.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.0", "1e2", "1.0000000000000001", "1e-400", "9007199254740993", ".5", "+3", "5.", "1e", "00012.3400e-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseDecimal(s)
		if !ok || len(s) > 200 {
			return
		}
		r, rok := new(big.Rat).SetString(s)
		if !rok {
			return // an exponent beyond what big accepts
		}
		if d.integer() != r.IsInt() {
			t.Fatalf("%q: integer %v, big says %v", s, d.integer(), r.IsInt())
		}
		if d.integer() {
			inRange := r.Num().CmpAbs(big.NewInt(MaxSafeInteger)) <= 0
			if d.safe() != inRange {
				t.Fatalf("%q: safe %v, big says %v", s, d.safe(), inRange)
			}
			if d.safe() && d.text() != r.Num().String() {
				t.Fatalf("%q: text %s, big says %s", s, d.text(), r.Num())
			}
		}
	})
}
