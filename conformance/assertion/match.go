package assertion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// FixtureError reports a fixture that is not valid in the assertion
// language: it fails the case without calling the harness.
type FixtureError struct{ Msg string }

func (e *FixtureError) Error() string { return e.Msg }

func fixtureErrorf(format string, args ...any) error {
	return &FixtureError{Msg: fmt.Sprintf(format, args...)}
}

// Mismatch is one assertion that did not hold.
type Mismatch struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Reason explains a matcher failure ("shorter than minLength 10").
	Reason string `json:"reason,omitempty"`
}

func (m Mismatch) String() string {
	s := fmt.Sprintf("%s: expected %s, got %s", m.Path, m.Expected, m.Actual)
	if m.Reason != "" {
		s += " (" + m.Reason + ")"
	}
	return s
}

// Absent is how a value that does not exist is rendered in a Mismatch.
const Absent = "<absent>"

// Expected is a compiled expected value: a literal, null, or a matcher.
type Expected struct {
	raw     string
	kind    expKind
	literal any // string, bool or *big.Rat
	m       *matcher
}

type expKind int

const (
	expNull expKind = iota
	expString
	expBool
	expNumber
	expMatcher
)

type matcher struct {
	typ       string
	min, max  *big.Rat
	minLength *big.Rat
	pattern   *regexp.Regexp
}

// matcherKeys lists, per matcher type, the keys besides "type" it takes.
var matcherKeys = map[string][]string{
	"iso8601": nil,
	"string":  {"minLength", "pattern"},
	"number":  {"min", "max"},
	"boolean": nil,
}

// IsNull reports whether the expected value is null (null or absent).
func (e Expected) IsNull() bool { return e.kind == expNull }

// String returns the expected value as the fixture wrote it.
func (e Expected) String() string { return e.raw }

// CompileExpected compiles one expected value. Anything outside the
// assertion language (arrays, objects without "type", unknown matcher types
// or keys, a min on a string matcher, a pattern Go cannot compile) is a
// *FixtureError.
func CompileExpected(raw json.RawMessage) (Expected, error) {
	v, err := decode(raw)
	if err != nil {
		return Expected{}, fixtureErrorf("expected value %s is not JSON: %v", raw, err)
	}
	e := Expected{raw: compact(raw)}
	switch x := v.(type) {
	case nil:
		e.kind = expNull
	case string:
		e.kind, e.literal = expString, x
	case bool:
		e.kind, e.literal = expBool, x
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return Expected{}, fixtureErrorf("expected number %s cannot be read", x)
		}
		e.kind, e.literal = expNumber, r
	case []any:
		return Expected{}, fixtureErrorf("expected value %s is an array; the assertion language compares scalars only (assert elements by index, and the size with .length)", e.raw)
	case map[string]any:
		m, err := compileMatcher(x, e.raw)
		if err != nil {
			return Expected{}, err
		}
		e.kind, e.m = expMatcher, m
	}
	return e, nil
}

func compileMatcher(obj map[string]any, raw string) (*matcher, error) {
	t, ok := obj["type"]
	if !ok {
		return nil, fixtureErrorf("expected value %s is an object without \"type\"; only matcher objects are allowed (type iso8601, string, number or boolean)", raw)
	}
	typ, _ := t.(string)
	allowed, known := matcherKeys[typ]
	if !known {
		return nil, fixtureErrorf("matcher %s has unknown type %s (known: boolean, iso8601, number, string)", raw, compactValue(t))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := &matcher{typ: typ}
	for _, k := range keys {
		if k == "type" {
			continue
		}
		if !slices.Contains(allowed, k) {
			hint := "none"
			if len(allowed) > 0 {
				hint = strings.Join(allowed, ", ")
			}
			return nil, fixtureErrorf("matcher %s has unknown key %q for type %s (allowed: %s)", raw, k, typ, hint)
		}
		v := obj[k]
		switch k {
		case "min", "max", "minLength":
			n, isNum := v.(json.Number)
			if !isNum {
				return nil, fixtureErrorf("matcher %s: %s must be a number", raw, k)
			}
			r, ok := new(big.Rat).SetString(string(n))
			if !ok {
				return nil, fixtureErrorf("matcher %s: %s %s cannot be read", raw, k, n)
			}
			switch k {
			case "min":
				m.min = r
			case "max":
				m.max = r
			default:
				if r.Sign() < 0 {
					return nil, fixtureErrorf("matcher %s: minLength must not be negative", raw)
				}
				m.minLength = r
			}
		case "pattern":
			src, isStr := v.(string)
			if !isStr {
				return nil, fixtureErrorf("matcher %s: pattern must be a string", raw)
			}
			re, err := regexp.Compile(src)
			if err != nil {
				return nil, fixtureErrorf("matcher %s: pattern %q is not supported (%v); patterns use the ECMAScript syntax that Go's RE2 shares: no lookaround or backreferences", raw, src, err)
			}
			m.pattern = re
		}
	}
	if m.min != nil && m.max != nil && m.min.Cmp(m.max) > 0 {
		return nil, fixtureErrorf("matcher %s: min is greater than max, nothing can match", raw)
	}
	return m, nil
}

// Check tests an actual value; present is false when the path led nowhere.
// When the value does not match, reason may say why (matchers only).
func (e Expected) Check(actual any, present bool) (ok bool, reason string) {
	if e.kind == expNull {
		if !present || actual == nil {
			return true, ""
		}
		return false, ""
	}
	if !present {
		return false, "no value at this path"
	}
	switch e.kind {
	case expString:
		s, isStr := actual.(string)
		return isStr && s == e.literal.(string), ""
	case expBool:
		b, isBool := actual.(bool)
		return isBool && b == e.literal.(bool), ""
	case expNumber:
		r, isNum := number(actual)
		return isNum && r.Cmp(e.literal.(*big.Rat)) == 0, ""
	}
	return e.m.check(actual)
}

func (m *matcher) check(actual any) (bool, string) {
	switch m.typ {
	case "iso8601":
		s, isStr := actual.(string)
		if !isStr {
			return false, "not a string"
		}
		if !IsDateTime(s) {
			return false, "not an ISO 8601 date-time (RFC 3339: date, \"T\", time, and Z or an offset)"
		}
	case "string":
		s, isStr := actual.(string)
		if !isStr {
			return false, "not a string"
		}
		if m.minLength != nil {
			n := new(big.Rat).SetInt64(int64(jsLength(s)))
			if n.Cmp(m.minLength) < 0 {
				return false, fmt.Sprintf("length %s is below minLength %s", n.RatString(), m.minLength.RatString())
			}
		}
		if m.pattern != nil && !m.pattern.MatchString(s) {
			return false, fmt.Sprintf("does not match pattern %q", m.pattern.String())
		}
	case "number":
		r, isNum := number(actual)
		if !isNum {
			return false, "not a number"
		}
		if m.min != nil && r.Cmp(m.min) < 0 {
			return false, "below min " + ratString(m.min)
		}
		if m.max != nil && r.Cmp(m.max) > 0 {
			return false, "above max " + ratString(m.max)
		}
	case "boolean":
		if _, isBool := actual.(bool); !isBool {
			return false, "not a boolean"
		}
	}
	return true, ""
}

// IsDateTime reports whether s is an RFC 3339 date-time, the ISO 8601
// profile every nexus-core state schema requires (format: date-time).
func IsDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// jsLength counts UTF-16 code units, as JavaScript's String.length does.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// number reads a JSON number in any of the shapes decoders produce.
func number(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(string(x))
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case float32:
		return number(float64(x))
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case int32:
		return new(big.Rat).SetInt64(int64(x)), true
	case uint64:
		return new(big.Rat).SetUint64(x), true
	}
	return nil, false
}

// decode reads JSON with numbers kept as json.Number, refusing trailing data.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Render shows an actual value in a Mismatch: compact JSON, or Absent.
func Render(v any, present bool) string {
	if !present {
		return Absent
	}
	return compactValue(v)
}

func compactValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	const limit = 200
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
