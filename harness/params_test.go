package harness

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/testenv"
)

func testTool(params string, run func(args map[string]any) (map[string]any, error)) *tools.Tool {
	return &tools.Tool{
		Name:   "probe",
		Params: json.RawMessage(params),
		Handle: tools.Object(func(_ context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
			return run(args)
		}),
	}
}

// bare is an engine without a distribution: enough for tools that touch
// no state.
func bare(ts ...*tools.Tool) *Engine {
	e := &Engine{tools: map[string]*tools.Tool{}, env: &tools.Env{}}
	for _, t := range ts {
		e.Register(t)
	}
	return e
}

const probeSchema = `{
  "type": "object",
  "properties": {
    "n": {"type": "integer"},
    "x": {"type": "number"},
    "ok": {"type": "boolean"},
    "s": {"type": "string"},
    "ids": {"type": "array", "items": {"type": "integer"}},
    "m": {"type": "object", "additionalProperties": {"type": "integer"}},
    "either": {"type": ["integer", "string"]}
  },
  "additionalProperties": false
}`

func TestCoercion(t *testing.T) {
	cases := []struct {
		in, want map[string]any
		err      string
	}{
		// A number sent as text is read from the text, as one sent as a
		// JSON number is (TestIntegersAreDecidedOnTheText).
		{in: map[string]any{"n": "3"}, want: map[string]any{"n": json.Number("3")}},
		{in: map[string]any{"n": " -7 "}, want: map[string]any{"n": json.Number("-7")}},
		{in: map[string]any{"x": "2.5"}, want: map[string]any{"x": 2.5}},
		{in: map[string]any{"ok": "true"}, want: map[string]any{"ok": true}},
		{in: map[string]any{"ids": []any{"1", 2.0}}, want: map[string]any{"ids": []any{json.Number("1"), 2.0}}},
		{in: map[string]any{"ids": `["1", 2]`}, want: map[string]any{"ids": []any{json.Number("1"), json.Number("2")}}},
		{in: map[string]any{"m": map[string]any{"a": "4"}}, want: map[string]any{"m": map[string]any{"a": json.Number("4")}}},
		{in: map[string]any{"s": "3"}, want: map[string]any{"s": "3"}},           // a string stays a string
		{in: map[string]any{"either": "3"}, want: map[string]any{"either": "3"}}, // string allowed: no guessing
		{in: map[string]any{"n": "2.5"}, err: `parameter "n" must be an integer, got number`},
		{in: map[string]any{"n": "three"}, err: `parameter "n" must be an integer, got string`},
		{in: map[string]any{"n": "0x10"}, err: `parameter "n" must be an integer, got string`},
		{in: map[string]any{"n": "NaN"}, err: `parameter "n" must be an integer, got string`},
		{in: map[string]any{"n": "1e400"}, err: `parameter "n" must be an integer from -9007199254740991 to 9007199254740991 (what a JSON number carries exactly), got 1e400`},
		{in: map[string]any{"n": "1e-400"}, err: `parameter "n" must be an integer, got number`},
		{in: map[string]any{"ids": "[1,"}, err: `parameter "ids" must be an array, got string`},
		{in: map[string]any{"n": 1, "zz": 2}, err: `unknown parameter "zz" (this tool takes: either, ids, m, n, ok, s, x)`},
		{in: map[string]any{"n": "x", "ids": []any{true}}, err: `parameter "ids[0]" must be an integer, got boolean; parameter "n" must be an integer, got string`},
	}
	for _, tc := range cases {
		var got map[string]any
		e := bare(testTool(probeSchema, func(args map[string]any) (map[string]any, error) {
			got = args
			return map[string]any{}, nil
		}))
		orig, _ := json.Marshal(tc.in)
		_, err := e.CallTool(context.Background(), "probe", tc.in)
		if after, _ := json.Marshal(tc.in); string(after) != string(orig) {
			t.Errorf("%v: the caller's arguments were changed to %s", string(orig), after)
		}
		if tc.err != "" {
			var te *tools.Error
			if !errors.As(err, &te) {
				t.Errorf("%s: err = %v, want a *tools.Error", orig, err)
				continue
			}
			if !sameProblems(te.Message, tc.err) {
				t.Errorf("%s: error %q, want %q", orig, te.Message, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", orig, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: tool saw %#v, want %#v", orig, got, tc.want)
		}
	}
}

// sameProblems compares "; "-joined problem lists ignoring order (the
// validator reports properties in map order).
func sameProblems(a, b string) bool {
	as, bs := strings.Split(a, "; "), strings.Split(b, "; ")
	if len(as) != len(bs) {
		return false
	}
	seen := map[string]int{}
	for _, x := range as {
		seen[x]++
	}
	for _, x := range bs {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestParamErrorsOverride(t *testing.T) {
	tool := testTool(`{"type":"object","properties":{"action":{"type":"string","enum":["a","b"]}},"required":["action"]}`,
		func(map[string]any) (map[string]any, error) { return nil, nil })
	tool.ParamErrors = map[string]string{"action": "Unknown action"}
	e := bare(tool)
	_, err := e.CallTool(context.Background(), "probe", map[string]any{"action": "zap"})
	if err == nil || err.Error() != `Unknown action: parameter "action" must be one of "a", "b", got "zap"` {
		t.Fatalf("err = %v", err)
	}
	_, err = e.CallTool(context.Background(), "probe", map[string]any{})
	if err == nil || err.Error() != `missing required parameter "action"` {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemasCompileOncePerProcess(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"description":"once"}`)
	var wg sync.WaitGroup
	got := make([]*compiledParams, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = params.get(append(json.RawMessage(nil), raw...))
		}()
	}
	wg.Wait()
	for _, cp := range got {
		if cp != got[0] || cp.err != nil || cp.sch == nil {
			t.Fatalf("schema compiled more than once or failed: %+v", cp)
		}
	}
}

func TestBrokenToolsDoNotCrash(t *testing.T) {
	e := bare(
		&tools.Tool{Name: "badschema", Params: json.RawMessage(`{"type": 3}`), Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) { return nil, nil })},
		&tools.Tool{Name: "extref", Params: json.RawMessage(`{"$ref": "https://example.com/x.json"}`), Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) { return nil, nil })},
		&tools.Tool{Name: "panics", Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) { panic("boom") })},
		&tools.Tool{Name: "unencodable", Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) {
			return map[string]any{"c": make(chan int)}, nil
		})},
	)
	for name, want := range map[string]string{
		"badschema":   "tool badschema:",
		"extref":      "external references are not fetched",
		"panics":      "tool panics failed unexpectedly: boom",
		"unencodable": "encode tool result",
		"missing":     `unknown tool "missing"`,
	} {
		_, err := e.CallTool(context.Background(), name, nil)
		var te *tools.Error
		if err == nil || errors.As(err, &te) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want an internal error containing %q", name, err, want)
		}
	}
}

func TestGoTypedArguments(t *testing.T) {
	var got map[string]any
	e := bare(testTool(probeSchema, func(args map[string]any) (map[string]any, error) {
		got = args
		return nil, nil
	}))
	_, err := e.CallTool(context.Background(), "probe", map[string]any{"n": 3, "ids": []int{1, 2}, "m": map[string]int{"a": 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": 3.0, "ids": []any{1.0, 2.0}, "m": map[string]any{"a": 1.0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool saw %#v, want %#v", got, want)
	}
	_, err = e.CallTool(context.Background(), "probe", map[string]any{"ids": []string{"x"}})
	var te *tools.Error
	if !errors.As(err, &te) || te.Message != `parameter "ids[0]" must be an integer, got string` {
		t.Fatalf("err = %v", err)
	}
}

func TestNilResultIsEmptyObject(t *testing.T) {
	e := bare(testTool(`{"type":"object"}`, func(map[string]any) (map[string]any, error) { return nil, nil }))
	res, err := e.CallTool(context.Background(), "probe", nil)
	if err != nil || res == nil || len(res) != 0 {
		t.Fatalf("res = %v, err = %v", res, err)
	}
}

func TestCoreToolSchemasCompile(t *testing.T) {
	for _, tool := range tools.All() {
		if cp := params.get(tool.Params); cp.err != nil {
			t.Errorf("%s: %v", tool.Name, cp.err)
		}
		var doc map[string]any
		if err := json.Unmarshal(tool.Params, &doc); err != nil || doc["type"] != "object" || doc["additionalProperties"] != false {
			t.Errorf("%s: parameters must be a closed object schema", tool.Name)
		}
	}
}

// Building an engine (what every hook process does) compiles no parameter
// schema; the first call of a tool compiles its own and nothing else.
func TestParamSchemasCompileLazily(t *testing.T) {
	count := func() int {
		params.mu.Lock()
		defer params.mu.Unlock()
		return len(params.byID)
	}
	before := count()
	e, err := New(Options{Project: t.TempDir(), CoreDir: testenv.CoreDir(t), Branch: func() string { return "main" }})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != before {
		t.Fatalf("New compiled %d parameter schemas", n-before)
	}
	raw := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false,"description":"lazy"}`)
	e.Register(&tools.Tool{Name: "lazy", Params: raw, Handle: tools.Object(func(context.Context, *tools.Env, map[string]any) (map[string]any, error) { return nil, nil })})
	if n := count(); n != before {
		t.Fatal("Register compiled a schema")
	}
	for i := 0; i < 3; i++ {
		if _, err := e.CallTool(context.Background(), "lazy", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != before+1 {
		t.Fatalf("three calls compiled %d schemas, want 1", n-before)
	}
}
