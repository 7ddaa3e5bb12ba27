package harness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/tools"
)

func toolByName(t *testing.T, name string) *tools.Tool {
	t.Helper()
	for _, tl := range tools.All() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// memoryTools stand in for the memory package's tools (which import this
// one): the limits go by tool and parameter name.
func memoryTool(name string) *tools.Tool {
	return &tools.Tool{Name: name, Params: json.RawMessage(`{"type":"object","properties":{` +
		`"category":{"type":"string"},"topic":{"type":"string"},"content":{"type":"string"},` +
		`"delete":{"type":"array","items":{"type":"string"}}}}`)}
}

// TestStringLimitsAtTheBoundary: every string parameter with its own
// limit, and one of the default ones, at limit-1, limit and limit+1.
func TestStringLimitsAtTheBoundary(t *testing.T) {
	params := map[string]string{}
	for k := range stringLimits {
		params[k] = ""
	}
	params["task_add.context"] = "task_add"
	params["plan_decide.decision"] = "plan_decide"
	params["plan_start.research_summary"] = "plan_start"
	params["plan_start.issues"] = "plan_start"
	for key := range params {
		tool, param, _ := strings.Cut(key, ".")
		var tl *tools.Tool
		if strings.HasPrefix(tool, "memory_") {
			tl = memoryTool(tool)
		} else {
			tl = toolByName(t, tool)
		}
		limit := StringLimit(tool, param)
		doc := paramsDoc(t, tl)
		ps, _ := propSchema(doc, param)
		for _, n := range []int{limit - 1, limit, limit + 1} {
			var v any = strings.Repeat("é", n/2) + strings.Repeat("x", n%2) // bytes, not characters
			if schemaTypes(ps)["array"] {
				v = []any{v}
			} else if schemaTypes(ps)["object"] {
				v = map[string]any{"architect": v}
			}
			err := checkLimits(tl, doc, map[string]any{param: v})
			if n <= limit && err != nil {
				t.Errorf("%s at %d bytes (limit %d) refused: %v", key, n, limit, err)
			}
			if n > limit {
				if err == nil {
					t.Errorf("%s at %d bytes (limit %d) accepted", key, n, limit)
				} else if !strings.Contains(err.Error(), "the limit is "+bytesText(limit)) || strings.Contains(err.Error(), "xx") || strings.Contains(err.Error(), "éé") {
					t.Errorf("%s: refusal does not name the limit or echoes the value: %.200s", key, err)
				}
			}
		}
	}
}

func paramsDoc(t *testing.T, tl *tools.Tool) map[string]any {
	t.Helper()
	cp := params.get(tl.Params)
	if cp.err != nil {
		t.Fatal(cp.err)
	}
	return cp.doc
}

func TestItemLimitsAtTheBoundary(t *testing.T) {
	tl := toolByName(t, "task_add")
	doc := paramsDoc(t, tl)
	for _, n := range []int{MaxItems - 1, MaxItems, MaxItems + 1} {
		deps := make([]any, n)
		for i := range deps {
			deps[i] = float64(i + 1)
		}
		err := checkLimits(tl, doc, map[string]any{"deps": deps})
		if (err != nil) != (n > MaxItems) {
			t.Errorf("%d deps: %v", n, err)
		}
		if err != nil && !strings.Contains(err.Error(), "the limit is 1000") {
			t.Errorf("refusal does not name the limit: %v", err)
		}
	}
}

// TestIntegersOutsideTheSafeRange (issue 13.7): integers JSON cannot carry
// exactly are refused through the engine, not stored wrapped or rounded.
func TestIntegersOutsideTheSafeRange(t *testing.T) {
	e := bare(toolByName(t, "task_add"))
	cases := []struct {
		name string
		args map[string]any
		bad  string // "" = accepted by the limit check
	}{
		{"deps at +max", map[string]any{"deps": []any{float64(MaxSafeInteger)}}, ""},
		{"deps at -max", map[string]any{"deps": []any{float64(-MaxSafeInteger)}}, ""},
		{"deps 2^53", map[string]any{"deps": []any{float64(1 << 53)}}, "deps[0]"},
		{"deps 2^53+1 sent", map[string]any{"deps": []any{float64(1<<53 + 1)}}, "deps[0]"}, // arrives rounded to 2^53
		{"deps 1e30 and 2^63", map[string]any{"deps": []any{1e30, float64(1 << 63)}}, "deps[1]"},
		{"plan_issue 1e30", map[string]any{"plan_issue": 1e30}, "plan_issue"},
		{"plan_issue -2^53", map[string]any{"plan_issue": -float64(1 << 53)}, "plan_issue"},
		{"plan_issue as text", map[string]any{"plan_issue": "1e30"}, "plan_issue"},
		{"json.Number 2^53+1", map[string]any{"plan_issue": json.Number("9007199254740993")}, "plan_issue"},
		{"json.Number max", map[string]any{"plan_issue": json.Number("9007199254740991")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"title": "t", "context": "c"}
			for k, v := range c.args {
				args[k] = v
			}
			_, err := checkArgs(e.tools["task_add"], args)
			if c.bad == "" {
				if err != nil && strings.Contains(err.Error(), "JSON number") {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), `"`+c.bad+`"`) || !strings.Contains(err.Error(), "9007199254740991") {
				t.Fatalf("err = %v, want a refusal of %s naming the safe range", err, c.bad)
			}
		})
	}
	// Not an integer at all: the schema's message.
	if _, err := checkArgs(e.tools["task_add"], map[string]any{"title": "t", "context": "c", "plan_issue": 1.5}); err == nil || !strings.Contains(err.Error(), "must be an integer") {
		t.Errorf("1.5: %v", err)
	}
}

// Plugin tools get the limits of nexus's own (issue 22.10): integers,
// strings (MaxTextBytes, or more when the plugin's schema declares a larger
// maxLength), arrays and objects, and the unknown-parameter rule.
func TestPluginToolLimits(t *testing.T) {
	tl := &tools.Tool{Name: "plug",
		Handle: func(context.Context, *tools.Env, map[string]any) (*tools.Result, error) { return &tools.Result{}, nil }, Plugin: "p",
		Params: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"},` +
			`"long":{"type":"string","maxLength":100000},"list":{"type":"array"}}}`)}
	for _, c := range []struct {
		name string
		args map[string]any
		err  string // "" = accepted
	}{
		{"string at the limit", map[string]any{"s": strings.Repeat("x", MaxTextBytes)}, ""},
		{"string over the limit", map[string]any{"s": strings.Repeat("x", MaxTextBytes+1)}, `parameter "s" is 65537 bytes long; the limit is 65536 bytes (64 KiB)`},
		{"declared maxLength raises it", map[string]any{"long": strings.Repeat("x", 100000)}, ""},
		{"declared maxLength in bytes", map[string]any{"long": strings.Repeat("x", 400001)}, `parameter "long" is 400001 bytes long; the limit is 400000 bytes`},
		{"1e30 integer", map[string]any{"n": 1e30}, "must be an integer from"},
		{"items at the limit", map[string]any{"list": make([]any, MaxItems)}, ""},
		{"items over the limit", map[string]any{"list": make([]any, MaxItems+1)}, `parameter "list" has 1001 items; the limit is 1000`},
		{"unknown parameter", map[string]any{"n": 1.0, "zz": []any{1.0}}, `unknown parameter "zz" (this tool takes: list, long, n, s)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkArgs(tl, c.args)
			if c.err == "" {
				if err != nil {
					t.Fatalf("refused: %.200v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %.300v, want %q", err, c.err)
			}
		})
	}
	// A schema that names no parameters takes any.
	free := &tools.Tool{Name: "free", Handle: tl.Handle, Plugin: tl.Plugin, Params: json.RawMessage(`{"type":"object"}`)}
	if _, err := checkArgs(free, map[string]any{"anything": "x"}); err != nil {
		t.Errorf("a schema without properties refused a parameter: %v", err)
	}
	// One that admits others says so.
	open := &tools.Tool{Name: "open", Handle: tl.Handle, Plugin: tl.Plugin, Params: json.RawMessage(`{"type":"object","properties":{"a":{}},"additionalProperties":true}`)}
	if _, err := checkArgs(open, map[string]any{"b": "x"}); err != nil {
		t.Errorf("additionalProperties true refused a parameter: %v", err)
	}
}

func TestUnknownParameterNamesAreClipped(t *testing.T) {
	e := bare(toolByName(t, "task_add"))
	long := strings.Repeat("k", 10000)
	_, err := checkArgs(e.tools["task_add"], map[string]any{"title": "t", "context": "c", long: 1})
	if err == nil || strings.Contains(err.Error(), long[:maxEcho+1]) || !strings.Contains(err.Error(), "(10000 bytes)") {
		t.Fatalf("err = %.300v", err)
	}
}
