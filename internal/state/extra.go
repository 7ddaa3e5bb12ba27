package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Extra holds the members of a JSON object that nexus does not know. They
// are kept and written back unchanged, so a field added by a newer
// nexus-core minor or another harness is never dropped by a rewrite.
type Extra map[string]json.RawMessage

var knownKeys sync.Map // reflect.Type → map[string]bool

func keysOf(t reflect.Type) map[string]bool {
	if k, ok := knownKeys.Load(t); ok {
		return k.(map[string]bool)
	}
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	knownKeys.Store(t, m)
	return m
}

// decodeWithExtra decodes b into plain (a pointer to a struct without custom
// (un)marshalers) and collects unknown members into extra.
func decodeWithExtra(b []byte, plain any, extra *Extra) error {
	if err := json.Unmarshal(b, plain); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	known := keysOf(reflect.TypeOf(plain).Elem())
	*extra = nil
	for k, v := range all {
		if !known[k] {
			if *extra == nil {
				*extra = Extra{}
			}
			(*extra)[k] = v
		}
	}
	return nil
}

// encodeWithExtra encodes plain and appends the extra members (sorted by
// name, after the known ones).
func encodeWithExtra(plain any, extra Extra) ([]byte, error) {
	b, err := marshalCompact(plain)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop '}'
	first := len(b) == 2    // "{}"
	for _, k := range keys {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := marshalCompact(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalCompact is json.Marshal without HTML escaping: JavaScript's
// JSON.stringify leaves <, > and & alone, and history_search matches text.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Encode renders v as the files are written: two-space indentation, no HTML
// escaping, one trailing newline (JSON.stringify(v, null, 2) + "\n").
func Encode(v any) ([]byte, error) {
	b, err := marshalCompact(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
