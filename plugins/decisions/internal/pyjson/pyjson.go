// Package pyjson writes JSON the way Python's json.dumps does: insertion
// ordered objects, indent=2 layout, ensure_ascii escaping (lower-case
// \uXXXX, surrogate pairs) and Python's float repr (8.445, 0.0, 1e-05).
// Nauro's files (.decision-hashes.json, snapshots, registry) are written
// this way, so byte-compatible stores need it.
package pyjson

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options select json.dumps arguments.
type Options struct {
	Indent      int  // 0 = compact with ", " and ": " separators
	EnsureASCII bool // escape every non-ASCII character
}

// File is json.dumps(v, indent=2) + "\n", Nauro's on-disk form.
func File(v any) string { return Dumps(v, Options{Indent: 2, EnsureASCII: true}) + "\n" }

// Dumps renders v. Supported values: nil, bool, ints, float32/64 (Python
// repr), string, []any, []string, map[string]any (sorted keys), *Object.
func Dumps(v any, opt Options) string {
	var b strings.Builder
	write(&b, v, opt, 0)
	return b.String()
}

func write(b *strings.Builder, v any, opt Options, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(FloatRepr(x))
	case float32:
		b.WriteString(FloatRepr(float64(x)))
	case string:
		writeString(b, x, opt.EnsureASCII)
	case []string:
		items := make([]any, len(x))
		for i, s := range x {
			items[i] = s
		}
		writeArray(b, items, opt, depth)
	case []any:
		writeArray(b, x, opt, depth)
	case map[string]any:
		o := NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.Set(k, x[k])
		}
		writeObject(b, o, opt, depth)
	case *Object:
		writeObject(b, x, opt, depth)
	default:
		panic(fmt.Sprintf("pyjson: unsupported type %T", v))
	}
}

func newline(b *strings.Builder, opt Options, depth int) {
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", opt.Indent*depth))
}

// itemStart writes what goes before the i-th member of a list or object:
// Python's item separator (", " or "," when indenting) and, when
// indenting, the member's new line.
func itemStart(b *strings.Builder, i int, opt Options, depth int) {
	if i > 0 {
		b.WriteByte(',')
		if opt.Indent == 0 {
			b.WriteByte(' ')
		}
	}
	if opt.Indent > 0 {
		newline(b, opt, depth+1)
	}
}

func writeArray(b *strings.Builder, items []any, opt Options, depth int) {
	if len(items) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteByte('[')
	for i, it := range items {
		itemStart(b, i, opt, depth)
		write(b, it, opt, depth+1)
	}
	if opt.Indent > 0 {
		newline(b, opt, depth)
	}
	b.WriteByte(']')
}

func writeObject(b *strings.Builder, o *Object, opt Options, depth int) {
	if o == nil || o.Len() == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	i := 0
	for k, v := range o.All() {
		itemStart(b, i, opt, depth)
		writeString(b, k, opt.EnsureASCII)
		b.WriteString(": ")
		write(b, v, opt, depth+1)
		i++
	}
	if opt.Indent > 0 {
		newline(b, opt, depth)
	}
	b.WriteByte('}')
}

func writeString(b *strings.Builder, s string, ascii bool) {
	const hex = "0123456789abcdef"
	u4 := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(hex[r>>12&0xf])
		b.WriteByte(hex[r>>8&0xf])
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				u4(r)
			case !ascii || r < 0x7f:
				if r == utf8.RuneError {
					u4(r)
				} else {
					b.WriteRune(r)
				}
			case r <= 0xffff:
				u4(r)
			default:
				r -= 0x10000
				u4(0xd800 + (r>>10)&0x3ff)
				u4(0xdc00 + r&0x3ff)
			}
		}
	}
	b.WriteByte('"')
}

// FloatRepr is Python's repr(float) (also what json.dumps writes).
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX, shortest digits
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	epos := strings.IndexByte(s, 'e')
	digits := strings.Replace(s[:epos], ".", "", 1)
	exp, _ := strconv.Atoi(s[epos+1:])
	var out string
	if exp >= -4 && exp < 16 {
		// fixed notation
		switch {
		case exp < 0:
			out = "0." + strings.Repeat("0", -exp-1) + digits
		case exp+1 >= len(digits):
			out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
		default:
			out = digits[:exp+1] + "." + digits[exp+1:]
		}
	} else {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out += fmt.Sprintf("e%s%02d", sign, exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}
