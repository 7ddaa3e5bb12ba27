// Package jsonscan looks at JSON nexus receives from outside (an MCP
// message, a hook payload, a plugin's reply) before anything decodes it:
// how deeply it nests, and where the members of its top-level object lie.
//
// It parses nothing. It only tells strings from structure, so it costs one
// pass over the bytes, allocates nothing for the depth check, and works on
// input of any depth and on input cut off in the middle (the head of an
// oversized message). encoding/json decodes nested values recursively: a
// 20 KB message nested 10,000 deep made `nexus mcp` use 184 MB, so depth is
// bounded here first, and values are decoded by a JSON library afterwards.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth is how many levels of arrays and objects a JSON document nexus
// receives may nest, the outermost one included: an MCP message (its
// envelope counts: {"params":{"arguments":{...}}} is three levels before a
// tool's own values), a hook payload, a plugin's tool result. Nothing
// nexus or a tool it serves reads comes near it; JSON libraries allow
// 10,000.
const MaxDepth = 64

// DepthError reports a document nested deeper than Limit.
type DepthError struct{ Limit int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nested deeper than the limit of %d levels", e.Limit)
}

// CheckDepth returns a *DepthError when data nests more than limit levels
// of arrays and objects; it stops reading as soon as it knows. Brackets
// inside strings do not count. Input that is not valid JSON is not
// reported (the decoder that runs next does that); for a valid prefix the
// depth counted is exactly the decoder's.
func CheckDepth(data []byte, limit int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i)
		case '[', '{':
			depth++
			if depth > limit {
				return &DepthError{Limit: limit}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// stringEnd returns the index of the quote closing the string that opens
// at data[i] (len(data) when it is cut off).
func stringEnd(data []byte, i int) int {
	i++
	q := -1 // the next quote at or after i, once found
	for i < len(data) {
		// Both searches run at memchr speed, and each byte is looked at
		// a bounded number of times: strings are mostly text.
		if q < i {
			j := bytes.IndexByte(data[i:], '"')
			if j < 0 {
				return len(data)
			}
			q = i + j
		}
		k := bytes.IndexByte(data[i:q], '\\')
		if k < 0 {
			return q
		}
		i += k + 2 // past the backslash and the byte it escapes
	}
	return len(data)
}

// valueEnd returns the index just past the value starting at data[i]
// (after white space), or -1 when it is cut off or is not a value.
func valueEnd(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		j := stringEnd(data, i)
		if j >= len(data) {
			return -1
		}
		return j + 1
	case '[', '{':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case ',', ':', ']', '}':
		return -1
	}
	// A number or a literal: up to the next delimiter.
	j := i
	for j < len(data) && !strings.ContainsRune(",:]}[{\" \t\r\n", rune(data[j])) {
		j++
	}
	return j
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// Member is a member of an object: the raw text of its value, a slice of
// the document, and where that value lies in it. The zero Member (Value
// nil) is a member that is not there.
type Member struct {
	Value      []byte
	Start, End int
}

// Pick reads the members of the object data holds and returns, for each
// of names, the last member whose name equals it ignoring case: the one
// encoding/json, which matches names that way and keeps the last, would
// decode into a field of that name. dup is the first of names that more
// than one member carries ("" when none does). For input cut off or
// broken in the middle, the members before the break count and complete
// is false. Values are only delimited, not checked, so Pick serves input
// of any depth; call it on valid JSON to rely on more than where the
// members are.
func Pick(data []byte, names ...string) (picked []Member, complete bool, dup string) {
	picked = make([]Member, len(names))
	complete = each(data, func(name []byte, m Member) bool {
		for k, n := range names {
			if strings.EqualFold(string(name), n) {
				if picked[k].Value != nil && dup == "" {
					dup = n
				}
				picked[k] = m
			}
		}
		return true
	})
	return picked, complete, dup
}

// String returns the string value of the member Pick finds for name, or
// "" when there is none or it is not a string: the event a hook payload
// names, read from a payload that may be broken after it.
func String(data []byte, name string) string {
	m, _, _ := Pick(data, name)
	var s string
	if m[0].Value == nil || m[0].Value[0] != '"' || json.Unmarshal(m[0].Value, &s) != nil {
		return ""
	}
	return s
}

// First returns the first member named exactly name, reading no further
// than it: for a document nexus wrote itself, where names are unique.
func First(data []byte, name string) (m Member, ok bool) {
	each(data, func(n []byte, v Member) bool {
		if string(n) == name {
			m, ok = v, true
			return false
		}
		return true
	})
	return m, ok
}

// each calls f with the name (unescaped) and value of each member of the
// object data holds, in order, until f returns false. It reports whether
// it read the whole object.
func each(data []byte, f func(name []byte, m Member) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	var name []byte
	for i < len(data) {
		if data[i] != '"' {
			return false
		}
		end := stringEnd(data, i)
		if end >= len(data) {
			return false
		}
		// Invalid UTF-8 comes back replaced, as encoding/json reads it
		// (the error only reports it); a bad escape cannot occur in the
		// valid JSON whose members matter.
		name, _ = jsontext.AppendUnquote(name[:0], data[i:end+1])
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		vend := valueEnd(data, start)
		if vend < 0 {
			return false
		}
		// A member counts once the delimiter after it is read: the end of
		// a cut-off number is not the end of the number.
		i = skipSpace(data, vend)
		if i >= len(data) || (data[i] != ',' && data[i] != '}') {
			return false
		}
		if !f(name, Member{Value: data[start:vend], Start: start, End: vend}) {
			return false
		}
		if data[i] == '}' {
			return true
		}
		i = skipSpace(data, i+1)
	}
	return false
}
