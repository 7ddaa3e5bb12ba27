package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReadBoundedLine: whatever the input, every line of at most the limit
// comes back byte for byte, every longer line is reported as a
// *TooLongError, and the reader never loses its place.
func FuzzReadBoundedLine(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2}\n"), 8)
	f.Add([]byte("short\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nend"), 5)
	f.Add([]byte("\n\n\n"), 0)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		r := bufio.NewReaderSize(bytes.NewReader(in), 16)
		lines := bytes.SplitAfter(in, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for i, want := range lines {
			got, err := readBoundedLine(r, limit)
			body := bytes.TrimSuffix(want, []byte("\n"))
			var tl *TooLongError
			switch {
			case len(body) > limit:
				if !errors.As(err, &tl) {
					t.Fatalf("line %d (%d bytes, limit %d): %q, %v; want TooLongError", i, len(body), limit, got, err)
				}
			case err != nil && !(errors.Is(err, io.EOF) && i == len(lines)-1):
				t.Fatalf("line %d: %v", i, err)
			case !bytes.Equal(got, want):
				t.Fatalf("line %d = %q, want %q", i, got, want)
			}
		}
	})
}

// FuzzPeekID: peekID never panics, returns only the text of a string or a
// number (what a JSON-RPC id may be, as sent), and agrees byte for byte
// with a full decode of a whole object that has a single id.
func FuzzPeekID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
	f.Add([]byte(`{"id":"a\"b","params":{`))
	f.Add([]byte(`{"params":{"x":[1,2,{"id":3}]},"id":null}`))
	f.Add([]byte(`{"id":1,"id":2}`))
	f.Add([]byte(`{"id":9007199254740993}`))
	f.Add([]byte(`{"id":1234`))
	f.Fuzz(func(t *testing.T, head []byte) {
		id := peekID(head)
		if id == nil {
			return
		}
		// UseNumber: an id is echoed as sent, so a number too large for a
		// float64 (1E700) is still a number by JSON's grammar.
		var v any
		dec := json.NewDecoder(bytes.NewReader(id))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("peekID = %q, not one JSON value: %v", id, err)
		}
		switch v.(type) {
		case string, json.Number:
		default:
			t.Fatalf("peekID = %q", id)
		}
		var whole map[string]json.RawMessage
		if json.Unmarshal(head, &whole) != nil || bytes.Count(bytes.ToLower(head), []byte(`"id"`)) != 1 {
			return // cut off, or ambiguous: nothing to compare with
		}
		// Members match "id" as encoding/json matches a struct field (any
		// case: "iD" is the id too), which is how the MCP library reads it.
		var want json.RawMessage
		for k, v := range whole {
			if strings.EqualFold(k, "id") {
				want = v
			}
		}
		if !bytes.Equal(id, want) {
			t.Fatalf("peekID = %s, decode = %s", id, want)
		}
	})
}
