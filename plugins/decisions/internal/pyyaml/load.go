package pyyaml

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Values produced by Load mirror the Python objects yaml.safe_load builds:
// nil (None), bool, int64 or *big.Int (int), float64, string, Date,
// DateTime, []any (list) and *Mapping (dict). Other safe types (bytes, set)
// are represented by Opaque.

// Date is a datetime.date.
type Date struct{ Year, Month, Day int }

// String renders the ISO form (date.isoformat()).
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// DateTime is a datetime.datetime; Offset is nil for a naive value.
type DateTime struct {
	Date
	Hour, Minute, Second, Micro int
	Offset                      *int // seconds east of UTC
}

// Mapping is a dict with insertion order kept.
type Mapping struct {
	Keys   []any
	Values []any
}

// Opaque stands for a safe_load value nexus never needs to inspect.
type Opaque struct{ TypeName string }

// SyntaxError is a yaml.YAMLError: the text is not YAML PyYAML accepts.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// ValueError is a plain Python ValueError raised while constructing a value
// (an impossible date such as 2026-02-30). PyYAML does not wrap it.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

// Load parses one YAML document like yaml.safe_load. An empty document (or
// one holding only comments) gives nil.
func Load(text string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, &SyntaxError{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	c := constructor{seen: map[*yaml.Node]any{}}
	return c.construct(doc.Content[0])
}

type constructor struct {
	seen  map[*yaml.Node]any
	depth int
}

func (c *constructor) construct(n *yaml.Node) (any, error) {
	if v, ok := c.seen[n]; ok {
		return v, nil
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > 200 {
		return nil, &SyntaxError{Msg: "document nested too deeply"}
	}
	var (
		v   any
		err error
	)
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &SyntaxError{Msg: "found undefined alias"}
		}
		v, err = c.construct(n.Alias)
	case yaml.ScalarNode:
		v, err = c.scalar(n)
	case yaml.SequenceNode:
		v, err = c.sequence(n)
	case yaml.MappingNode:
		v, err = c.mapping(n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		v, err = c.construct(n.Content[0])
	default:
		err = &SyntaxError{Msg: fmt.Sprintf("unexpected node kind %d", n.Kind)}
	}
	if err != nil {
		return nil, err
	}
	c.seen[n] = v
	return v, nil
}

func (c *constructor) sequence(n *yaml.Node) (any, error) {
	switch tag := explicitTag(n); tag {
	case "", "!!seq":
	case "!!omap", "!!pairs":
		return Opaque{TypeName: "list"}, nil
	default:
		return nil, undefinedTag(tag)
	}
	out := make([]any, 0, len(n.Content))
	for _, item := range n.Content {
		v, err := c.construct(item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (c *constructor) mapping(n *yaml.Node) (any, error) {
	switch tag := explicitTag(n); tag {
	case "", "!!map":
	case "!!set":
		return Opaque{TypeName: "set"}, nil
	default:
		return nil, undefinedTag(tag)
	}
	m := &Mapping{}
	index := map[string]int{}
	set := func(k, v any) error {
		hk, ok := hashKey(k)
		if !ok {
			return &SyntaxError{Msg: "while constructing a mapping: found unhashable key"}
		}
		if i, ok := index[hk]; ok {
			m.Values[i] = v // duplicate key: the last one wins, first position kept
			return nil
		}
		index[hk] = len(m.Keys)
		m.Keys = append(m.Keys, k)
		m.Values = append(m.Values, v)
		return nil
	}
	// PyYAML's flatten_mapping: merged pairs come first, explicit pairs
	// override them.
	var merged, own [][2]any
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.Style&quotedStyles == 0 && explicitTag(kn) == "" && kn.Value == "<<" {
			pairs, err := c.mergeSource(vn)
			if err != nil {
				return nil, err
			}
			merged = append(merged, pairs...)
			continue
		}
		k, err := c.construct(kn)
		if err != nil {
			return nil, err
		}
		v, err := c.construct(vn)
		if err != nil {
			return nil, err
		}
		own = append(own, [2]any{k, v})
	}
	for _, p := range append(merged, own...) {
		if err := set(p[0], p[1]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (c *constructor) mergeSource(n *yaml.Node) ([][2]any, error) {
	src := n
	for src.Kind == yaml.AliasNode && src.Alias != nil {
		src = src.Alias
	}
	collect := func(mn *yaml.Node) ([][2]any, error) {
		v, err := c.construct(mn)
		if err != nil {
			return nil, err
		}
		m, ok := v.(*Mapping)
		if !ok {
			return nil, &SyntaxError{Msg: "while constructing a mapping: expected a mapping for merging"}
		}
		out := make([][2]any, len(m.Keys))
		for i := range m.Keys {
			out[i] = [2]any{m.Keys[i], m.Values[i]}
		}
		return out, nil
	}
	switch src.Kind {
	case yaml.MappingNode:
		return collect(src)
	case yaml.SequenceNode:
		// Later mappings in the list have lower priority.
		var out [][2]any
		for i := len(src.Content) - 1; i >= 0; i-- {
			pairs, err := collect(src.Content[i])
			if err != nil {
				return nil, err
			}
			out = append(out, pairs...)
		}
		return out, nil
	}
	return nil, &SyntaxError{Msg: "while constructing a mapping: expected a mapping or list of mappings for merging"}
}

const quotedStyles = yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// explicitTag returns the tag written in the document, or "" when the node
// was untagged (yaml.v3 fills Tag with its own resolution otherwise).
func explicitTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle == 0 {
		return ""
	}
	return n.Tag
}

func undefinedTag(tag string) error {
	return &SyntaxError{Msg: fmt.Sprintf("could not determine a constructor for the tag %s", pyTag(tag))}
}

func pyTag(tag string) string {
	if strings.HasPrefix(tag, "!!") {
		return "'tag:yaml.org,2002:" + tag[2:] + "'"
	}
	return "'" + tag + "'"
}

func (c *constructor) scalar(n *yaml.Node) (any, error) {
	tag := explicitTag(n)
	if tag == "" {
		if n.Style&quotedStyles != 0 {
			return n.Value, nil
		}
		return constructKind(Resolve(n.Value), n.Value)
	}
	switch tag {
	case "!!str":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		return constructKind(KindBool, n.Value)
	case "!!int":
		return constructKind(KindInt, n.Value)
	case "!!float":
		return constructKind(KindFloat, n.Value)
	case "!!timestamp":
		return constructKind(KindTimestamp, n.Value)
	case "!!binary":
		return Opaque{TypeName: "bytes"}, nil
	}
	return nil, undefinedTag(tag)
}

func constructKind(k Kind, s string) (any, error) {
	switch k {
	case KindStr:
		return s, nil
	case KindNull:
		return nil, nil
	case KindBool:
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true, nil
		case "no", "false", "off":
			return false, nil
		}
		return nil, &SyntaxError{Msg: fmt.Sprintf("invalid boolean %q", s)}
	case KindInt:
		return constructInt(s)
	case KindFloat:
		return constructFloat(s)
	case KindTimestamp:
		return constructTimestamp(s)
	case KindMerge:
		return nil, undefinedTag("!!merge")
	case KindValue:
		return nil, undefinedTag("!!value")
	}
	return s, nil
}

func constructInt(s string) (any, error) {
	v := strings.ReplaceAll(s, "_", "")
	if v == "" {
		return nil, &ValueError{Msg: "invalid literal for int() with base 10: ''"}
	}
	sign := 1
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	var (
		n    = new(big.Int)
		base = 10
		body = v
	)
	switch {
	case v == "0":
		return int64(0), nil
	case strings.HasPrefix(v, "0b"):
		base, body = 2, v[2:]
	case strings.HasPrefix(v, "0x"):
		base, body = 16, v[2:]
	case v != "" && v[0] == '0':
		base = 8
	case strings.Contains(v, ":"):
		total := new(big.Int)
		for _, part := range strings.Split(v, ":") {
			d, ok := new(big.Int).SetString(part, 10)
			if !ok {
				return nil, &ValueError{Msg: fmt.Sprintf("invalid literal for int() with base 10: %s", quotePy(part))}
			}
			total.Mul(total, big.NewInt(60))
			total.Add(total, d)
		}
		n = total
		return normInt(n, sign), nil
	}
	if _, ok := n.SetString(body, base); !ok || body == "" {
		return nil, &ValueError{Msg: fmt.Sprintf("invalid literal for int() with base %d: %s", base, quotePy(body))}
	}
	return normInt(n, sign), nil
}

func normInt(n *big.Int, sign int) any {
	if sign < 0 {
		n.Neg(n)
	}
	if n.IsInt64() {
		return n.Int64()
	}
	return n
}

func constructFloat(s string) (any, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && v[0] == '-' {
		sign = -1
	}
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		total := 0.0
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, &ValueError{Msg: fmt.Sprintf("could not convert string to float: %s", quotePy(part))}
			}
			total = total*60 + d
		}
		return sign * total, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, &ValueError{Msg: fmt.Sprintf("could not convert string to float: %s", quotePy(v))}
	}
	return sign * f, nil
}

func constructTimestamp(s string) (any, error) {
	m := reTimeParts().FindStringSubmatch(s)
	if m == nil {
		return nil, &SyntaxError{Msg: fmt.Sprintf("invalid timestamp %q", s)}
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	d := Date{atoi(m[1]), atoi(m[2]), atoi(m[3])}
	if err := checkDate(d); err != nil {
		return nil, err
	}
	if m[4] == "" {
		return d, nil
	}
	dt := DateTime{Date: d, Hour: atoi(m[4]), Minute: atoi(m[5]), Second: atoi(m[6])}
	if frac := m[7]; frac != "" {
		frac = (frac + "000000")[:6]
		dt.Micro = atoi(frac)
	}
	if m[8] != "" {
		off := 0
		if m[8] != "Z" {
			off = atoi(m[10])*3600 + atoi(m[11])*60
			if m[9] == "-" {
				off = -off
			}
		}
		dt.Offset = &off
	}
	switch {
	case dt.Hour > 23:
		return nil, &ValueError{Msg: "hour must be in 0..23"}
	case dt.Minute > 59:
		return nil, &ValueError{Msg: "minute must be in 0..59"}
	case dt.Second > 59:
		return nil, &ValueError{Msg: "second must be in 0..59"}
	}
	if dt.Offset != nil && (*dt.Offset <= -86400 || *dt.Offset >= 86400) {
		return nil, &ValueError{Msg: "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)."}
	}
	return dt, nil
}

var reTimeParts = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)
})

func checkDate(d Date) error {
	if d.Year < 1 {
		return &ValueError{Msg: fmt.Sprintf("year %d is out of range", d.Year)}
	}
	if d.Month < 1 || d.Month > 12 {
		return &ValueError{Msg: "month must be in 1..12"}
	}
	if d.Day < 1 || d.Day > DaysIn(d.Year, d.Month) {
		return &ValueError{Msg: "day is out of range for month"}
	}
	return nil
}

// DaysIn returns the number of days of a month in the proleptic Gregorian
// calendar.
func DaysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// hashKey gives dict-key identity with Python's equalities (True == 1 ==
// 1.0). Lists and mappings are unhashable.
func hashKey(k any) (string, bool) {
	switch v := k.(type) {
	case nil:
		return "None", true
	case bool:
		if v {
			return "i:1", true
		}
		return "i:0", true
	case int64:
		return "i:" + strconv.FormatInt(v, 10), true
	case *big.Int:
		return "i:" + v.String(), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e18 {
			return "i:" + strconv.FormatInt(int64(v), 10), true
		}
		return "f:" + strconv.FormatFloat(v, 'g', -1, 64), true
	case string:
		return "s:" + v, true
	case Date:
		return "d:" + v.String(), true
	case DateTime:
		return fmt.Sprintf("t:%v", v), true
	}
	return "", false
}

// TypeName is Python's type(v).__name__ for a loaded value.
func TypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case Date:
		return "date"
	case DateTime:
		return "datetime"
	case []any:
		return "list"
	case *Mapping:
		return "dict"
	case Opaque:
		return x.TypeName
	}
	return fmt.Sprintf("%T", v)
}

// quotePy renders s as Python's repr of a str (single-quoted, simple case).
func quotePy(s string) string {
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}
