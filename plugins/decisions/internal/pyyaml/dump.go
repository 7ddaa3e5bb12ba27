package pyyaml

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ErrUnrepresentable is returned for values yaml.safe_dump would write in
// a form nexus does not emit (sets, binary, anything Opaque).
var ErrUnrepresentable = errors.New("value has no block YAML form nexus writes")

// Representable reports whether Entry can write v.
func Representable(v any) bool {
	switch x := v.(type) {
	case nil, bool, int64, *big.Int, float64, string, Date, DateTime:
		return true
	case []any:
		for _, it := range x {
			if !Representable(it) {
				return false
			}
		}
		return true
	case *Mapping:
		for i := range x.Keys {
			if !Representable(x.Keys[i]) || !Representable(x.Values[i]) {
				return false
			}
			if _, ok := x.Keys[i].([]any); ok {
				return false
			}
			if _, ok := x.Keys[i].(*Mapping); ok {
				return false
			}
		}
		return true
	}
	return false
}

// Entry writes "key: value" for any loaded value the way
// yaml.safe_dump(default_flow_style=False, sort_keys=False,
// allow_unicode=True) lays it out in a top-level block mapping: nested
// mappings indented by two, sequences inside mappings indentless, empty
// collections as [] and {}.
func (w *Writer) Entry(key string, v any) error {
	if !Representable(v) {
		return fmt.Errorf("%s: %w", key, ErrUnrepresentable)
	}
	w.entry(0, key, v)
	return nil
}

func (w *Writer) pad(indent int) {
	if indent > 0 {
		w.write(strings.Repeat(" ", indent))
	}
}

// entry writes one mapping entry starting at the current position (the
// caller has written the indentation).
func (w *Writer) entry(indent int, key, v any) {
	w.node(indent, key)
	w.write(":")
	w.whitespace = false
	switch x := v.(type) {
	case *Mapping:
		if len(x.Keys) == 0 {
			w.write(" {}")
			w.lineBreak()
			return
		}
		w.lineBreak()
		w.mapping(indent+bestIndent, x, false)
	case []any:
		if len(x) == 0 {
			w.write(" []")
			w.lineBreak()
			return
		}
		w.lineBreak()
		w.sequence(indent, x, false) // indentless inside a mapping
	default:
		w.node(indent+bestIndent, v)
		w.lineBreak()
	}
}

// mapping writes the entries at indent; with inline the first one
// continues the current line (a mapping that is a sequence item).
func (w *Writer) mapping(indent int, m *Mapping, inline bool) {
	for i := range m.Keys {
		if i > 0 || !inline {
			w.pad(indent)
		}
		w.entry(indent, m.Keys[i], m.Values[i])
	}
}

func (w *Writer) sequence(indent int, s []any, inline bool) {
	for i, it := range s {
		if i > 0 || !inline {
			w.pad(indent)
		}
		w.write("-")
		w.whitespace = false
		switch x := it.(type) {
		case *Mapping:
			if len(x.Keys) == 0 {
				w.write(" {}")
				w.lineBreak()
				continue
			}
			w.write(" ")
			w.whitespace = true
			w.mapping(indent+bestIndent, x, true)
		case []any:
			if len(x) == 0 {
				w.write(" []")
				w.lineBreak()
				continue
			}
			w.write(" ")
			w.whitespace = true
			w.sequence(indent+bestIndent, x, true)
		default:
			w.node(indent+bestIndent, it)
			w.lineBreak()
		}
	}
}

// node writes a scalar (a key or a value); continuation lines of a folded
// string are indented to indent.
func (w *Writer) node(indent int, v any) {
	if s, ok := v.(string); ok {
		w.scalarAt(indent, s)
		return
	}
	if !w.whitespace {
		w.write(" ")
	}
	w.write(ScalarText(v))
	w.whitespace, w.indention = false, false
}

// ScalarText is PyYAML's SafeRepresenter text of a non-string scalar.
func ScalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	case float64:
		return floatText(x)
	case Date:
		return x.String()
	case DateTime:
		return dateTimeText(x)
	}
	return fmt.Sprint(v)
}

// floatText is represent_float: repr() lower-cased, ".0" added to an
// exponent form without a point, and YAML's names for inf and nan.
func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := pyFloatRepr(f)
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

// pyFloatRepr is Python's repr(float): the shortest round-tripping digits,
// fixed notation for decimal exponents -4 <= e < 16, else scientific with
// at least two exponent digits.
func pyFloatRepr(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}

// dateTimeText is datetime.isoformat(" ").
func dateTimeText(t DateTime) string {
	s := fmt.Sprintf("%s %02d:%02d:%02d", t.Date, t.Hour, t.Minute, t.Second)
	if t.Micro != 0 {
		s += fmt.Sprintf(".%06d", t.Micro)
	}
	if t.Offset != nil {
		off := *t.Offset
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		s += fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60)
		if off%60 != 0 {
			s += fmt.Sprintf(":%02d", off%60)
		}
	}
	return s
}
