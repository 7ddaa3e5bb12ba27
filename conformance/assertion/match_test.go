package assertion

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckExpected(t *testing.T) {
	tests := []struct {
		expected string
		actual   string // JSON; "" = absent
		ok       bool
		reason   string // substring of the reason, when it matters
	}{
		// literals
		{`"a"`, `"a"`, true, ""},
		{`"a"`, `"b"`, false, ""},
		{`"1"`, `1`, false, ""},
		{`1`, `1`, true, ""},
		{`1`, `1.0`, true, ""},
		{`1`, `1e0`, true, ""},
		{`1`, `"1"`, false, ""},
		{`1`, `2`, false, ""},
		{`0`, `false`, false, ""},
		{`true`, `true`, true, ""},
		{`true`, `false`, false, ""},
		{`false`, `null`, false, ""},
		{`"x"`, ``, false, "no value"},
		// null = null or absent (digest C5)
		{`null`, `null`, true, ""},
		{`null`, ``, true, ""},
		{`null`, `""`, false, ""},
		{`null`, `0`, false, ""},
		// iso8601
		{`{"type":"iso8601"}`, `"2026-04-16T08:52:55.250Z"`, true, ""},
		{`{"type":"iso8601"}`, `"2026-04-16T08:52:55Z"`, true, ""},
		{`{"type":"iso8601"}`, `"2026-04-16T08:52:55.1+09:00"`, true, ""},
		{`{"type":"iso8601"}`, `"2026-04-16T08:52:55"`, false, "ISO 8601"},
		{`{"type":"iso8601"}`, `"2026-04-16"`, false, "ISO 8601"},
		{`{"type":"iso8601"}`, `"2026-13-16T08:52:55Z"`, false, "ISO 8601"},
		{`{"type":"iso8601"}`, `"yesterday"`, false, "ISO 8601"},
		{`{"type":"iso8601"}`, `1776329575`, false, "not a string"},
		{`{"type":"iso8601"}`, ``, false, "no value"},
		// string
		{`{"type":"string"}`, `""`, true, ""},
		{`{"type":"string"}`, `null`, false, "not a string"},
		{`{"type":"string","minLength":1}`, `""`, false, "minLength 1"},
		{`{"type":"string","minLength":10}`, `"0123456789"`, true, ""},
		{`{"type":"string","minLength":10}`, `"012345678"`, false, "length 9"},
		{`{"type":"string","minLength":2}`, `"😀"`, true, ""}, // two UTF-16 units, like JS
		{`{"type":"string","minLength":2}`, `"é"`, false, ""},
		{`{"type":"string","pattern":"findings\\.md$"}`, `"/tmp/x/.nexus/state/artifacts/findings.md"`, true, ""},
		{`{"type":"string","pattern":"findings\\.md$"}`, `"/tmp/findings.md.bak"`, false, "pattern"},
		{`{"type":"string","pattern":"findings\\.md$"}`, `"/tmp/findingsxmd"`, false, "pattern"},
		{`{"type":"string","pattern":"state"}`, `"the state layer"`, true, ""}, // unanchored search
		{`{"type":"string","pattern":"^a","minLength":3}`, `"ab"`, false, "minLength"},
		// number
		{`{"type":"number"}`, `0`, true, ""},
		{`{"type":"number"}`, `"1"`, false, "not a number"},
		{`{"type":"number","min":1}`, `1`, true, ""},
		{`{"type":"number","min":1}`, `0`, false, "below min 1"},
		{`{"type":"number","min":1,"max":2.5}`, `2.5`, true, ""},
		{`{"type":"number","min":1,"max":2.5}`, `2.51`, false, "above max 2.5"},
		{`{"type":"number","max":0}`, `-3`, true, ""},
		// boolean
		{`{"type":"boolean"}`, `false`, true, ""},
		{`{"type":"boolean"}`, `"true"`, false, "not a boolean"},
		{`{"type":"boolean"}`, `0`, false, "not a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.expected+"~"+tt.actual, func(t *testing.T) {
			e, err := CompileExpected(json.RawMessage(tt.expected))
			if err != nil {
				t.Fatal(err)
			}
			var actual any
			present := tt.actual != ""
			if present {
				actual = mustDecode(t, tt.actual)
			}
			ok, reason := e.Check(actual, present)
			if ok != tt.ok {
				t.Fatalf("Check(%s) = %v (%s), want %v", tt.actual, ok, reason, tt.ok)
			}
			if !strings.Contains(reason, tt.reason) {
				t.Fatalf("reason %q does not mention %q", reason, tt.reason)
			}
		})
	}
}

func TestCheckAcceptsGoNumbers(t *testing.T) {
	e, err := CompileExpected(json.RawMessage(`2`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{2, int64(2), 2.0, float32(2), uint64(2), json.Number("2")} {
		if ok, _ := e.Check(v, true); !ok {
			t.Errorf("%T %v does not equal 2", v, v)
		}
	}
}

func TestCompileExpectedRejects(t *testing.T) {
	tests := []struct{ expected, want string }{
		{`{"type":"date"}`, `unknown type "date"`},
		{`{"type":7}`, `unknown type 7`},
		{`{"type":"string","maxLength":3}`, `unknown key "maxLength"`},
		{`{"type":"string","min":1}`, `unknown key "min" for type string`},
		{`{"type":"number","minLength":1}`, `unknown key "minLength" for type number`},
		{`{"type":"iso8601","pattern":"Z$"}`, `unknown key "pattern" for type iso8601 (allowed: none)`},
		{`{"type":"number","min":"1"}`, `min must be a number`},
		{`{"type":"number","min":3,"max":1}`, `min is greater than max`},
		{`{"type":"string","minLength":-1}`, `must not be negative`},
		{`{"type":"string","pattern":3}`, `pattern must be a string`},
		{`{"type":"string","pattern":"(?=a)"}`, `is not supported`},
		{`{"type":"string","pattern":"(a)\\1"}`, `is not supported`},
		{`{"min":1}`, `without "type"`},
		{`{}`, `without "type"`},
		{`[1,2]`, `is an array`},
		{`nope`, `not JSON`},
		{`1 2`, `not JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.expected, func(t *testing.T) {
			_, err := CompileExpected(json.RawMessage(tt.expected))
			var fe *FixtureError
			if !errors.As(err, &fe) {
				t.Fatalf("CompileExpected(%s) error = %v, want a *FixtureError", tt.expected, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestBlock(t *testing.T) {
	b, err := CompileBlock(json.RawMessage(`{
		"$.created": true,
		"$.plan_id": {"type": "number", "min": 1},
		"$.issues.length": 2,
		"$.issues[0].decision": null,
		"$.topic": "x"
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Has("$.created") || b.Has("$.error") || b.ExpectsError() {
		t.Fatal("Has() or ExpectsError() is wrong")
	}
	for raw, want := range map[string]bool{
		`{"$.error": "No active plan session"}`:    true,
		`{"$.error": {"type": "string"}}`:          true,
		`{"$.error": null}`:                        false,
		`{"$.errors": "x", "$.result.error": "x"}`: false,
	} {
		eb, err := CompileBlock(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if eb.ExpectsError() != want {
			t.Errorf("%s: ExpectsError() = %v, want %v", raw, !want, want)
		}
	}
	doc := mustDecode(t, `{"created": true, "plan_id": "1", "issues": [{"id": 1}], "topic": "y"}`)
	got := b.Check(doc)
	want := []string{
		`$.plan_id: expected {"type":"number","min":1}, got "1" (not a number)`,
		`$.issues.length: expected 2, got 1`,
		`$.topic: expected "x", got "y"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mismatches %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("mismatch %d = %q, want %q", i, got[i].String(), want[i])
		}
	}
	ok := mustDecode(t, `{"created": true, "plan_id": 3, "issues": [{"id": 1}, {"id": 2}], "topic": "x"}`)
	if m := b.Check(ok); len(m) != 0 {
		t.Fatalf("unexpected mismatches %v", m)
	}
}

func TestCompileBlockRejects(t *testing.T) {
	tests := []struct{ block, want string }{
		{`{"$.a": 1, "$.a": 2}`, `appears twice`},
		{`{"a": 1}`, `must start with "$"`},
		{`{"$.a": {"type": "regex"}}`, `$.a: matcher {"type":"regex"} has unknown type`},
		{`[1]`, `expected a JSON object`},
	}
	for _, tt := range tests {
		_, err := CompileBlock(json.RawMessage(tt.block))
		var fe *FixtureError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompileBlock(%s) error = %v, want a *FixtureError containing %q", tt.block, err, tt.want)
		}
	}
}

func TestMembersKeepOrder(t *testing.T) {
	ms, err := Members(json.RawMessage(`{"z": 1, "a": {"n": [1]}, "m": null}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.Key+"="+string(m.Value))
	}
	if got := strings.Join(keys, " "); got != `z=1 a={"n": [1]} m=null` {
		t.Fatalf("members = %s", got)
	}
}

func TestRenderTruncatesOnRuneBoundary(t *testing.T) {
	s := Render(strings.Repeat("é", 300), true)
	if !strings.HasSuffix(s, "…") || len(s) > 210 {
		t.Fatalf("Render = %q", s)
	}
	for _, r := range s {
		if r == '\uFFFD' {
			t.Fatal("Render cut a rune in half")
		}
	}
	if Render(nil, false) != Absent || Render(nil, true) != "null" {
		t.Fatal("absent and null must render differently")
	}
}

func TestExpand(t *testing.T) {
	tests := []struct{ in, id, want, bad string }{
		{".nexus/state/plan.json", "x", ".nexus/state/plan.json", ""},
		{"{STATE_ROOT}/{HARNESS_ID}/agent-tracker.json", "claude-nexus", ".nexus/state/claude-nexus/agent-tracker.json", ""},
		{"{STATE_ROOT}/tasks.json", "", ".nexus/state/tasks.json", ""},
		{"{STATE_ROOT}/{HARNESS_ID}/x", "", "", "no harness id"},
		{"{STATE_DIR}/x", "a", "", "unknown placeholder {STATE_DIR}"},
		{"{harness_id}/x", "a", "", "unknown placeholder {harness_id}"},
		{"{}/x", "a", "", "unknown placeholder {}"},
		{"{STATE_ROOT/x", "a", "", "unterminated"},
		{"{STATE_{ROOT}}", "a", "", "unterminated"},
		{"a}b", "a", "", "stray"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, tt.id)
		if tt.bad != "" {
			var fe *FixtureError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("Expand(%q) error = %v, want a *FixtureError containing %q", tt.in, err, tt.bad)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, %v; want %q", tt.in, tt.id, got, err, tt.want)
		}
	}
}
