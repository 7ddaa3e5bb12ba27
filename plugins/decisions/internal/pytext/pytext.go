// Package pytext reproduces the few Python string semantics the Nauro
// reference relies on (str.isspace, strip, split, lower, isdigit, isalnum,
// repr, code-point slicing). Byte-compatible files and identical search
// results depend on them, and Go's standard library differs in each case.
package pytext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace reports whether Python's str.isspace() holds for r (also regex \s
// and the characters str.strip()/str.split() remove).
func IsSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r >= 0x1c && r <= 0x20:
		return true
	case r == 0x85, r == 0xa0, r == 0x1680:
		return true
	case r >= 0x2000 && r <= 0x200a:
		return true
	case r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// Strip is Python's str.strip() with no argument.
func Strip(s string) string { return strings.TrimFunc(s, IsSpace) }

// RStrip is Python's str.rstrip() with no argument.
func RStrip(s string) string { return strings.TrimRightFunc(s, IsSpace) }

// LStrip is Python's str.lstrip() with no argument.
func LStrip(s string) string { return strings.TrimLeftFunc(s, IsSpace) }

// Fields is Python's str.split() with no argument.
func Fields(s string) []string { return strings.FieldsFunc(s, IsSpace) }

// IsDecimal reports whether r is in Unicode category Nd (Python regex \d,
// str.isdecimal, and the digits int() accepts).
func IsDecimal(r rune) bool { return unicode.Is(unicode.Nd, r) }

// IsDigit is Python's str.isdigit() for one character: Nd plus the
// Numeric_Type=Digit characters (superscripts, circled and parenthesised
// digits, ...), which int() rejects.
func IsDigit(r rune) bool {
	if IsDecimal(r) {
		return true
	}
	for _, rg := range digitOnly {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// digitOnly lists the code points with Numeric_Type=Digit that are not Nd
// (Unicode 14, as Python 3.11 sees them).
var digitOnly = [][2]rune{
	{0x00b2, 0x00b3}, {0x00b9, 0x00b9}, {0x1369, 0x1371}, {0x19da, 0x19da},
	{0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2460, 0x2468},
	{0x2474, 0x247c}, {0x2488, 0x2490}, {0x24ea, 0x24ea}, {0x24f5, 0x24fd},
	{0x24ff, 0x24ff}, {0x2776, 0x277e}, {0x2780, 0x2788}, {0x278a, 0x2792},
	{0x10a40, 0x10a43}, {0x10e60, 0x10e68}, {0x11052, 0x1105a},
	{0x1f100, 0x1f10a},
}

// DecimalValue returns the value of an Nd digit (0-9), or -1. Every Nd run
// in the Unicode tables starts at a zero, so the offset from the start of its
// range gives the value.
func DecimalValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// IsAlnum is Python's str.isalnum() for one character: letters (L*) and
// numbers (N*).
func IsAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// IsWord is Python's regex \w in Unicode mode.
func IsWord(r rune) bool { return r == '_' || IsAlnum(r) }

// Len is Python's len(): the number of code points.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Head returns the first n code points of s (Python s[:n]).
func Head(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Truncate shortens s to at most n code points, replacing the tail with an
// ellipsis: n-1 characters plus "…" when s is longer than n.
func Truncate(s string, n int) string {
	if Len(s) <= n {
		return s
	}
	return Head(s, n-1) + "…"
}

// Lower is Python's str.lower(): full Unicode lower-casing, including the
// unconditional U+0130 mapping and the Final_Sigma rule.
func Lower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x0130:
			b.WriteString("i\u0307")
		case 0x03a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x03c2)
			} else {
				b.WriteRune(0x03c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma applies Python's context test: a cased letter (skipping
// case-ignorables) before, and no cased letter (skipping case-ignorables)
// after.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && caseIgnorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0x00b7, 0x0387, 0x05f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// Repr is Python's repr() of a str.
func Repr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(hexEscape(`\x`, r, 2))
		case r < 0x7f:
			b.WriteRune(r)
		case !printable(r):
			switch {
			case r <= 0xff:
				b.WriteString(hexEscape(`\x`, r, 2))
			case r <= 0xffff:
				b.WriteString(hexEscape(`\u`, r, 4))
			default:
				b.WriteString(hexEscape(`\U`, r, 8))
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// printable approximates Python's str.isprintable for one non-ASCII rune:
// everything except categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than
// the ASCII space.
func printable(r rune) bool {
	if r == utf8.RuneError || !utf8.ValidRune(r) {
		return false
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs) {
		return false
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

func hexEscape(prefix string, r rune, width int) string {
	const digits = "0123456789abcdef"
	buf := make([]byte, width)
	v := uint32(r)
	for i := width - 1; i >= 0; i-- {
		buf[i] = digits[v&0xf]
		v >>= 4
	}
	return prefix + string(buf)
}
