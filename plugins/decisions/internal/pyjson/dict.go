package pyjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// Object is a JSON object as Python's json module gives it: a dict, which
// keeps its members in insertion order, so that a read-modify-write of
// Nauro's files keeps their order.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set adds or replaces a member: a new member goes last, an existing one
// keeps its position (d[k] = v).
func (o *Object) Set(k string, v any) *Object {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

// Get returns a member's value.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// Keys returns the member names in order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// All yields the members in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for _, k := range o.keys {
			if !yield(k, o.vals[k]) {
				return
			}
		}
	}
}

// Len is the number of members.
func (o *Object) Len() int { return len(o.keys) }

// MaxDepth is how many levels of arrays and objects Parse follows, the
// outermost one included. Nauro's files nest four at most; a store is a
// folder a repository can ship, and a 20 KB .decision-hashes.json nested
// 10,000 deep was read and written back indented as a 200 MB file (4 s).
// (Python's json.loads itself gives up near 1,000 levels.)
const MaxDepth = 64

// ErrTooDeep refuses a value nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("JSON nested deeper than the limit of %d levels", MaxDepth)

// Parse decodes JSON as json.loads does: objects become *Object in member
// order, integers int64, other numbers float64, then strings, booleans and
// nil. A duplicate member keeps the last value at the first position.
// Nesting deeper than MaxDepth is ErrTooDeep.
func Parse(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := parseValue(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

// parseValue reads one value from dec's token stream; depth is the level
// it would open (1 for the outermost value).
func parseValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Number:
		return pythonNumber(t)
	case json.Delim:
		if depth > MaxDepth {
			return nil, ErrTooDeep
		}
		var v any
		switch t {
		case '{':
			o := NewObject()
			for err == nil && dec.More() {
				var key json.Token
				if key, err = dec.Token(); err == nil {
					k, _ := key.(string) // the decoder only yields string keys
					var member any
					if member, err = parseValue(dec, depth+1); err == nil {
						o.Set(k, member)
					}
				}
			}
			v = o
		case '[':
			items := []any{}
			for err == nil && dec.More() {
				var item any
				if item, err = parseValue(dec, depth+1); err == nil {
					items = append(items, item)
				}
			}
			v = items
		default:
			return nil, errors.New("unexpected " + t.String())
		}
		if err != nil {
			return nil, err
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	default:
		return t, nil // string, bool, nil
	}
}

// pythonNumber types a number as Python's json module does.
func pythonNumber(n json.Number) (any, error) {
	if !strings.ContainsAny(string(n), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return n.Float64()
}
