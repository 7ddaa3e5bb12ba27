// Package jsonorder decodes JSON while keeping each object's member order,
// for read-modify-write of files other programs also write (Claude Code's
// settings): rewriting them must change only what nexus changes, not
// reorder what it does not know. (The decision store, which must not import
// nexus's internal packages, has its own: plugins/decisions/internal/pyjson.)
package jsonorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// Object is a JSON object that keeps insertion order.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set adds or replaces a member; a new member goes last, an existing one
// keeps its position.
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

// Delete removes a member.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
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

// Parse decodes one JSON value. Objects become *Object, arrays []any,
// numbers whatever number returns (json.Number itself when nil), strings,
// booleans and null as encoding/json gives them. A duplicate member keeps
// the last value at the first position. A value nested deeper than
// jsonscan.MaxDepth is refused before anything is decoded: the files
// parsed here come from repositories too, and a 20 KB .mcp.json nested
// 10,000 deep took the installer 1.6 GB and came back as a 200 MB file.
func Parse(data []byte, number func(json.Number) (any, error)) (any, error) {
	if err := jsonscan.CheckDepth(data, jsonscan.MaxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, number)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, number func(json.Number) (any, error)) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := parseValue(dec, number)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec, number)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	case json.Number:
		if number != nil {
			return number(t)
		}
		return t, nil
	default:
		return t, nil // string, bool, nil
	}
}
