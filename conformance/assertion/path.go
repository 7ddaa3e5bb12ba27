// Package assertion is the assertion language of nexus-core conformance
// fixtures (digest §6.5–§6.6): a JSONPath subset, the expected-value rules
// (literals, null-or-absent, matcher objects) and the two path placeholders.
//
// It is kept apart from the runner so that it can be tested on its own and
// reused by other runners. Everything that a fixture author can get wrong
// (an unknown matcher key, a bad regular expression, an unknown placeholder)
// is reported as a *FixtureError when the assertion is compiled, before any
// harness is called, so a broken fixture fails loudly instead of passing.
package assertion

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Segment is one step of a Path: a member name or an array index.
type Segment struct {
	// Name is the member name; it is used when IsIndex is false.
	Name string
	// Index is the array index; negative counts from the end (-1 = last).
	Index int
	// IsIndex tells an index segment from a name segment.
	IsIndex bool
	// Quoted marks a bracketed name (['length']): never the array length.
	Quoted bool
}

// Path is a parsed JSONPath: "$" followed by segments.
type Path struct {
	src  string
	segs []Segment
}

// String returns the path as written.
func (p Path) String() string { return p.src }

// Segments returns the parsed segments.
func (p Path) Segments() []Segment { return p.segs }

// ParsePath parses the JSONPath subset the fixtures use:
//
//	path    := "$" segment*
//	segment := "." name | "[" int "]" | "[" quoted-string "]"
//	name    := (letter | "_" | non-ASCII) (letter | digit | "_" | non-ASCII)*
//	int     := "-"? digit+
//
// A ".length" segment applied to an array yields its length; everywhere else
// (and always in the bracketed form ['length']) it is an ordinary key.
func ParsePath(s string) (Path, error) {
	if !strings.HasPrefix(s, "$") {
		return Path{}, fmt.Errorf("JSONPath %q must start with \"$\"", s)
	}
	p := Path{src: s}
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			start := i
			for i < len(s) {
				r, size := utf8.DecodeRuneInString(s[i:])
				if !isNameRune(r, i == start) {
					break
				}
				i += size
			}
			if i == start {
				return Path{}, fmt.Errorf("JSONPath %q: expected a member name at offset %d", s, start)
			}
			p.segs = append(p.segs, Segment{Name: s[start:i]})
		case '[':
			seg, n, err := parseBracket(s, i)
			if err != nil {
				return Path{}, err
			}
			p.segs = append(p.segs, seg)
			i = n
		default:
			return Path{}, fmt.Errorf("JSONPath %q: unexpected %q at offset %d (use .name, [index] or ['name'])", s, s[i], i)
		}
	}
	return p, nil
}

func isNameRune(r rune, first bool) bool {
	switch {
	case r == '_' || r >= 0x80 && r != utf8.RuneError:
		return true
	case r < 0x80 && unicode.IsLetter(r):
		return true
	case !first && r >= '0' && r <= '9':
		return true
	}
	return false
}

// parseBracket parses "[...]" starting at s[i] == '[' and returns the
// segment and the offset just past "]".
func parseBracket(s string, i int) (Segment, int, error) {
	j := i + 1
	if j < len(s) && (s[j] == '\'' || s[j] == '"') {
		quote := s[j]
		var b strings.Builder
		j++
		for {
			if j >= len(s) {
				return Segment{}, 0, fmt.Errorf("JSONPath %q: unterminated string at offset %d", s, i+1)
			}
			c := s[j]
			if c == quote {
				j++
				break
			}
			if c == '\\' {
				if j+1 >= len(s) {
					return Segment{}, 0, fmt.Errorf("JSONPath %q: unterminated escape at offset %d", s, j)
				}
				switch e := s[j+1]; e {
				case '\\', '\'', '"', '/':
					b.WriteByte(e)
				default:
					return Segment{}, 0, fmt.Errorf("JSONPath %q: unsupported escape \\%c at offset %d", s, e, j)
				}
				j += 2
				continue
			}
			b.WriteByte(c)
			j++
		}
		if j >= len(s) || s[j] != ']' {
			return Segment{}, 0, fmt.Errorf("JSONPath %q: expected \"]\" at offset %d", s, j)
		}
		return Segment{Name: b.String(), Quoted: true}, j + 1, nil
	}
	end := strings.IndexByte(s[j:], ']')
	if end < 0 {
		return Segment{}, 0, fmt.Errorf("JSONPath %q: missing \"]\" after offset %d", s, i)
	}
	num := s[j : j+end]
	if !isInt(num) {
		return Segment{}, 0, fmt.Errorf("JSONPath %q: %q is not an array index (filters, slices and wildcards are not part of the fixture language)", s, num)
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return Segment{}, 0, fmt.Errorf("JSONPath %q: index %s is out of range", s, num)
	}
	return Segment{Index: n, IsIndex: true}, j + end + 1, nil
}

func isInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Eval applies the path to a JSON-shaped value (map[string]any, []any,
// string, bool, nil, json.Number or float64). ok is false when some step
// does not exist: the value is "undefined", which is not the same as null.
func (p Path) Eval(doc any) (v any, ok bool) {
	cur := doc
	for _, seg := range p.segs {
		switch {
		case seg.IsIndex:
			arr, isArr := cur.([]any)
			if !isArr {
				return nil, false
			}
			i := seg.Index
			if i < 0 {
				i += len(arr)
			}
			if i < 0 || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
		default:
			if arr, isArr := cur.([]any); isArr {
				if seg.Name == "length" && !seg.Quoted {
					cur = len(arr)
					continue
				}
				return nil, false
			}
			obj, isObj := cur.(map[string]any)
			if !isObj {
				return nil, false
			}
			next, found := obj[seg.Name]
			if !found {
				return nil, false
			}
			cur = next
		}
	}
	return cur, true
}
