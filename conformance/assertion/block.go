package assertion

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Assertion is one "<JSONPath>": <expected> pair.
type Assertion struct {
	Path     Path
	Expected Expected
}

// Block is an assertion object, in the order the fixture wrote it (so
// reports are deterministic).
type Block []Assertion

// Has reports whether the block asserts on exactly this path ("$.error").
func (b Block) Has(path string) bool {
	for _, a := range b {
		if a.Path.String() == path {
			return true
		}
	}
	return false
}

// ExpectsError reports whether the block asserts a value for "$.error":
// the call must fail (digest §6.7). "$.error": null asserts the opposite.
func (b Block) ExpectsError() bool {
	for _, a := range b {
		if a.Path.String() == "$.error" && !a.Expected.IsNull() {
			return true
		}
	}
	return false
}

// Check evaluates every assertion against doc and returns the ones that do
// not hold, in block order.
func (b Block) Check(doc any) []Mismatch {
	var out []Mismatch
	for _, a := range b {
		v, present := a.Path.Eval(doc)
		if ok, reason := a.Expected.Check(v, present); !ok {
			out = append(out, Mismatch{
				Path:     a.Path.String(),
				Expected: a.Expected.String(),
				Actual:   Render(v, present),
				Reason:   reason,
			})
		}
	}
	return out
}

// CompileBlock compiles an assertion object. Errors are *FixtureError.
func CompileBlock(raw json.RawMessage) (Block, error) {
	members, err := Members(raw)
	if err != nil {
		return nil, &FixtureError{Msg: "assertions: " + err.Error()}
	}
	b := make(Block, 0, len(members))
	for _, m := range members {
		p, err := ParsePath(m.Key)
		if err != nil {
			return nil, &FixtureError{Msg: err.Error()}
		}
		e, err := CompileExpected(m.Value)
		if err != nil {
			return nil, &FixtureError{Msg: fmt.Sprintf("%s: %v", m.Key, err)}
		}
		b = append(b, Assertion{Path: p, Expected: e})
	}
	return b, nil
}

// Member is one key/value pair of a JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members splits a JSON object into its members in document order. A
// duplicate key is an error: JSON parsers disagree about which one wins.
func Members(raw json.RawMessage) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object, got %s", compact(raw))
	}
	var out []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		out = append(out, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}
