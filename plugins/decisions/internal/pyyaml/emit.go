package pyyaml

import (
	"fmt"
	"strings"
)

// Layout constants of yaml.safe_dump's defaults.
const (
	bestWidth  = 80
	bestIndent = 2
)

// Style is the quoting style PyYAML picks for a string scalar.
type Style int

// Scalar styles.
const (
	Plain Style = iota
	SingleQuoted
	DoubleQuoted
)

// StyleOf returns the style yaml.safe_dump(allow_unicode=True) uses for the
// string s written as a block mapping value or block sequence item.
//
// One conscious deviation: a string holding U+0085, U+2028 or U+2029 is
// always double-quoted (escaped as \N, \L, \P). PyYAML would single-quote
// some of them and read the result back with a space instead of the
// character; nexus keeps such values intact.
func StyleOf(s string) Style {
	if strings.ContainsAny(s, "\u0085\u2028\u2029") {
		return DoubleQuoted
	}
	a := analyze(s)
	if Resolve(s) == KindStr && !a.empty && a.allowBlockPlain {
		return Plain
	}
	if a.allowSingleQuoted {
		return SingleQuoted
	}
	return DoubleQuoted
}

type analysis struct {
	empty, multiline                   bool
	allowBlockPlain, allowSingleQuoted bool
}

func isBreak(r rune) bool { return r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029 }

func isSpaceOrBreak(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || isBreak(r)
}

// printableUnicode is PyYAML's test for characters allowed unescaped when
// allow_unicode is on.
func printableUnicode(r rune) bool {
	return (r == 0x85 || (r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) ||
		(r >= 0x10000 && r < 0x10ffff)) && r != 0xfeff
}

// analyze is PyYAML's Emitter.analyze_scalar restricted to what the block
// styles need.
func analyze(s string) analysis {
	if s == "" {
		return analysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	rs := []rune(s)
	var blockIndicators, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockIndicators = true
	}
	precededByWS := true
	followedByWS := len(rs) == 1 || isSpaceOrBreak(rs[1])
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				blockIndicators = true
			}
			if (ch == '?' || ch == ':') && followedByWS {
				blockIndicators = true
			}
			if ch == '-' && followedByWS {
				blockIndicators = true
			}
		} else {
			if ch == ':' && followedByWS {
				blockIndicators = true
			}
			if ch == '#' && precededByWS {
				blockIndicators = true
			}
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) && !printableUnicode(ch) {
			special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(rs)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(rs)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = isSpaceOrBreak(ch)
		followedByWS = i+2 >= len(rs) || isSpaceOrBreak(rs[i+2])
	}
	a := analysis{multiline: lineBreaks, allowBlockPlain: true, allowSingleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.allowBlockPlain = false
	}
	if breakSpace {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	if spaceBreak || special {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	if lineBreaks || blockIndicators {
		a.allowBlockPlain = false
	}
	return a
}

// Writer accumulates block-style YAML the way PyYAML's emitter lays it out,
// tracking the column for line folding at width 80.
type Writer struct {
	b          strings.Builder
	column     int
	whitespace bool
	indention  bool
	indent     int
}

// NewWriter starts a document at column 0.
func NewWriter() *Writer { return &Writer{whitespace: true, indention: true} }

// String returns what has been written.
func (w *Writer) String() string { return w.b.String() }

// Raw writes a line made of text that needs no quoting (keys, plain
// tokens such as dates, integers, enum values, null, []), ending it.
func (w *Writer) Raw(key, value string) {
	w.write(key + ":")
	if value != "" {
		w.write(" " + value)
	}
	w.lineBreak()
}

// KeyOnly writes "key:" and ends the line (a block sequence follows).
func (w *Writer) KeyOnly(key string) {
	w.write(key + ":")
	w.lineBreak()
}

// StringValue writes "key: <scalar>" for a string value and ends the line.
func (w *Writer) StringValue(key, value string) {
	w.write(key + ":")
	w.whitespace, w.indention = false, false
	w.scalar(value)
	w.lineBreak()
}

// SequenceItem writes "- <scalar>" at column 0 (PyYAML's indentless
// sequence inside a mapping) and ends the line.
func (w *Writer) SequenceItem(value string) {
	w.write("-")
	w.whitespace = false
	w.scalar(value)
	w.lineBreak()
}

func (w *Writer) write(s string) {
	w.b.WriteString(s)
	w.column += len([]rune(s))
}

func (w *Writer) lineBreak() {
	w.b.WriteByte('\n')
	w.whitespace, w.indention = true, true
	w.column = 0
}

func (w *Writer) writeIndent() {
	if !w.indention || w.column > w.indent || (w.column == w.indent && !w.whitespace) {
		w.lineBreak()
	}
	if w.column < w.indent {
		w.whitespace = true
		w.b.WriteString(strings.Repeat(" ", w.indent-w.column))
		w.column = w.indent
	}
}

func (w *Writer) indicator(ind string, needWhitespace bool) {
	if w.whitespace || !needWhitespace {
		w.write(ind)
	} else {
		w.write(" " + ind)
	}
	w.whitespace = false
	w.indention = false
}

func (w *Writer) scalar(s string) { w.scalarAt(bestIndent, s) }

// scalarAt writes s in the style PyYAML picks for it; continuation lines
// of a folded string are indented to indent.
func (w *Writer) scalarAt(indent int, s string) {
	w.indent = indent
	switch StyleOf(s) {
	case Plain:
		w.plain([]rune(s))
	case SingleQuoted:
		w.singleQuoted([]rune(s))
	default:
		w.doubleQuoted([]rune(s))
	}
	w.indent = 0
}

func (w *Writer) plain(text []rune) {
	if len(text) == 0 {
		return
	}
	if !w.whitespace {
		w.write(" ")
	}
	w.whitespace, w.indention = false, false
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(text); end++ {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && w.column > bestWidth {
					w.writeIndent()
					w.whitespace, w.indention = false, false
				} else {
					w.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				if text[start] == '\n' {
					w.lineBreak()
				}
				for _, br := range text[start:end] {
					w.b.WriteRune(br)
					w.whitespace, w.indention, w.column = true, true, 0
				}
				w.writeIndent()
				w.whitespace, w.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) {
				w.write(string(text[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
	}
}

func (w *Writer) singleQuoted(text []rune) {
	w.indicator("'", true)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(text); end++ {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch == -1 || ch != ' ' {
				if start+1 == end && w.column > bestWidth && start != 0 && end != len(text) {
					w.writeIndent()
				} else {
					w.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				if text[start] == '\n' {
					w.lineBreak()
				}
				for _, br := range text[start:end] {
					w.b.WriteRune(br)
					w.whitespace, w.indention, w.column = true, true, 0
				}
				w.writeIndent()
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) || ch == '\'' {
				if start < end {
					w.write(string(text[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			w.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
	}
	w.indicator("'", false)
}

var escapes = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f",
	0x0d: "r", 0x1b: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_",
	0x2028: "L", 0x2029: "P",
}

func (w *Writer) doubleQuoted(text []rune) {
	w.indicator(`"`, true)
	start := 0
	for end := 0; end <= len(text); end++ {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		if ch == -1 || strings.ContainsRune("\"\\\u0085\u2028\u2029\ufeff", ch) ||
			!((ch >= 0x20 && ch <= 0x7e) || (ch >= 0xa0 && ch <= 0xd7ff) || (ch >= 0xe000 && ch <= 0xfffd)) {
			if start < end {
				w.write(string(text[start:end]))
				start = end
			}
			if ch != -1 {
				var data string
				if e, ok := escapes[ch]; ok {
					data = `\` + e
				} else if ch <= 0xff {
					data = fmt.Sprintf(`\x%02X`, ch)
				} else if ch <= 0xffff {
					data = fmt.Sprintf(`\u%04X`, ch)
				} else {
					data = fmt.Sprintf(`\U%08X`, ch)
				}
				w.write(data)
				start = end + 1
			}
		}
		if end > 0 && end < len(text)-1 && (ch == ' ' || start >= end) && w.column+(end-start) > bestWidth {
			// Python's text[start:end] is empty when an escape already
			// moved start past end.
			data := `\`
			if start < end {
				data = string(text[start:end]) + data
				start = end
			}
			w.write(data)
			w.writeIndent()
			w.whitespace, w.indention = false, false
			if text[start] == ' ' {
				w.write(`\`)
			}
		}
	}
	w.indicator(`"`, false)
}
