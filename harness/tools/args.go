package tools

import (
	"encoding/json"
	"math"
	"strconv"
)

// The engine has validated the arguments against the tool's schema before
// a handler sees them, so these accessors only convert; a value of an unexpected
// type reads as absent.

// str returns a string argument.
func str(args map[string]any, key string) (string, bool) {
	s, ok := args[key].(string)
	return s, ok
}

// strPtr returns a string argument as an optional field value.
func strPtr(args map[string]any, key string) *string {
	if s, ok := str(args, key); ok {
		return &s
	}
	return nil
}

// integer returns an integral number argument (JSON numbers arrive as
// float64, json.Number or Go integers depending on the caller).
func integer(args map[string]any, key string) (int64, bool) {
	return toInt(args[key])
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return toInt(f)
		}
	}
	return 0, false
}

// strList returns a string-array argument.
func strList(args map[string]any, key string) ([]string, bool) {
	return listArg(args, key, func(x any) (string, bool) { s, ok := x.(string); return s, ok })
}

// intList returns an integer-array argument.
func intList(args map[string]any, key string) ([]int64, bool) {
	return listArg(args, key, toInt)
}

// listArg returns an array argument, as given or converted element by element
// from a decoded JSON array; false when an element does not convert.
func listArg[T any](args map[string]any, key string, elem func(any) (T, bool)) ([]T, bool) {
	switch v := args[key].(type) {
	case []T:
		return v, true
	case []any:
		out := make([]T, 0, len(v))
		for _, x := range v {
			e, ok := elem(x)
			if !ok {
				return nil, false
			}
			out = append(out, e)
		}
		return out, true
	}
	return nil, false
}

// strMap returns an object-of-strings argument.
func strMap(args map[string]any, key string) (map[string]string, bool) {
	switch v := args[key].(type) {
	case map[string]string:
		return v, true
	case map[string]any:
		out := make(map[string]string, len(v))
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out[k] = s
		}
		return out, true
	}
	return nil, false
}

// itoa renders an id the way the contract's messages do ("Issue 999 not
// found", never "999.0" or "9.99e+02").
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
