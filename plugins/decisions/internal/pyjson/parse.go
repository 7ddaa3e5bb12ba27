package pyjson

import (
	"encoding/json"
	"strings"

	"github.com/nexus-harness/nexus/internal/jsonorder"
)

// Parse decodes JSON keeping object key order (objects become *Object,
// integers int64, other numbers float64) so that a read-modify-write keeps
// the file's order, as Python's json module does. Duplicate keys: the last
// value wins at the first position.
func Parse(text string) (any, error) {
	return jsonorder.Parse([]byte(text), pythonNumber)
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
