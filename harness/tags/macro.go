package tags

import (
	"fmt"
	"strings"
)

// Macro is one {{primitive key=value ...}} invocation in a skill body
// (grammar of nexus-core's v0.7→v0.8 migration notes).
type Macro struct {
	ID string
	// Params hold each value as written: quoted strings unquoted, arrays
	// and objects as their raw text, heredoc values as their body.
	Params map[string]string
	// Order lists the parameter names as they appear.
	Order []string
	// Start and End delimit the text the macro occupies in the body,
	// heredoc bodies and terminators included.
	Start, End int
	Line       int // 1-based line of "{{"
}

// MacroError is a malformed or unknown macro; expanders must fail loudly.
type MacroError struct {
	Line int
	Msg  string
}

func (e *MacroError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ParseMacros finds every macro of a body. known lists the primitive ids
// of invocations.yml; any other id is an error.
func ParseMacros(body string, known map[string]bool) ([]Macro, error) {
	var out []Macro
	seenIdent := map[string]bool{}
	i := 0
	for {
		k := strings.Index(body[i:], "{{")
		if k < 0 {
			return out, nil
		}
		start := i + k
		m, err := parseMacro(body, start, seenIdent)
		if err != nil {
			return out, err
		}
		if !known[m.ID] {
			return out, &MacroError{Line: m.Line, Msg: fmt.Sprintf("{{%s}} is not a primitive of vocabulary/invocations.yml", m.ID)}
		}
		out = append(out, m)
		i = m.End
	}
}

func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }

func isIdent(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9') || (!first && c == '-')
}

func parseMacro(s string, start int, seenIdent map[string]bool) (Macro, error) {
	line := lineOf(s, start)
	fail := func(format string, args ...any) (Macro, error) {
		return Macro{}, &MacroError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	i := start + 2
	j := i
	for j < len(s) && isIdent(s[j], j == i) {
		j++
	}
	if j == i {
		return fail("macro without a primitive id")
	}
	m := Macro{ID: s[i:j], Params: map[string]string{}, Start: start, Line: line}
	i = j
	var heredocs []struct{ key, ident string }
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			return fail("{{%s is never closed with }}", m.ID)
		}
		if strings.HasPrefix(s[i:], "}}") {
			i += 2
			break
		}
		k := i
		for k < len(s) && isIdent(s[k], k == i) {
			k++
		}
		if k == i || k >= len(s) || s[k] != '=' {
			return fail("{{%s: expected key=value at %q", m.ID, clip(s[i:]))
		}
		key := s[i:k]
		if _, dup := m.Params[key]; dup {
			return fail("{{%s: parameter %s given twice", m.ID, key)
		}
		i = k + 1
		var val string
		switch {
		case strings.HasPrefix(s[i:], ">>"):
			e := i + 2
			for e < len(s) && isIdent(s[e], e == i+2) {
				e++
			}
			ident := s[i+2 : e]
			if ident == "" {
				return fail("{{%s: heredoc %s=>> without a name", m.ID, key)
			}
			if seenIdent[ident] {
				return fail("heredoc name %s is used twice in this body", ident)
			}
			seenIdent[ident] = true
			heredocs = append(heredocs, struct{ key, ident string }{key, ident})
			i = e
		case i < len(s) && s[i] == '"':
			e := i + 1
			var b strings.Builder
			for e < len(s) && s[e] != '"' {
				if s[e] == '\\' && e+1 < len(s) {
					e++
				}
				b.WriteByte(s[e])
				e++
			}
			if e >= len(s) {
				return fail("{{%s: unterminated string in %s", m.ID, key)
			}
			val = b.String()
			i = e + 1
		case i < len(s) && (s[i] == '[' || s[i] == '{'):
			e, err := skipNested(s, i)
			if err != nil {
				return fail("{{%s: %s: %v", m.ID, key, err)
			}
			val = s[i:e]
			i = e
		default:
			e := i
			for e < len(s) && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' && !strings.HasPrefix(s[e:], "}}") {
				e++
			}
			val = s[i:e]
			i = e
		}
		m.Params[key] = val
		m.Order = append(m.Order, key)
	}
	// Heredoc bodies follow the line the macro ends on.
	for _, h := range heredocs {
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			return fail("heredoc %s has no body", h.ident)
		}
		i += nl + 1
		term := "<<" + h.ident
		var body []string
		found := false
		for i <= len(s) {
			e := strings.IndexByte(s[i:], '\n')
			ln := ""
			next := len(s)
			if e < 0 {
				ln = s[i:]
			} else {
				ln = s[i : i+e]
				next = i + e + 1
			}
			if strings.TrimRight(ln, "\r") == term {
				found = true
				i += len(ln)
				break
			}
			body = append(body, ln)
			if e < 0 {
				i = len(s)
				break
			}
			i = next
		}
		if !found {
			return fail("heredoc %s is never closed with a line %s", h.ident, term)
		}
		m.Params[h.key] = strings.Join(body, "\n")
	}
	m.End = i
	return m, nil
}

// skipNested returns the index after the bracket group starting at s[i],
// honouring nested brackets and quoted strings.
func skipNested(s string, i int) (int, error) {
	var stack []byte
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '"':
			j++
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return 0, fmt.Errorf("unterminated string")
			}
		case '[':
			stack = append(stack, ']')
		case '{':
			stack = append(stack, '}')
		case ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, fmt.Errorf("unbalanced %c", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unterminated %c", s[i])
}

func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// Expand replaces every macro of body with render's text.
func Expand(body string, known map[string]bool, render func(Macro) string) (string, error) {
	ms, err := ParseMacros(body, known)
	if err != nil {
		return "", err
	}
	if len(ms) == 0 {
		return body, nil
	}
	var b strings.Builder
	b.Grow(len(body))
	prev := 0
	for _, m := range ms {
		b.WriteString(body[prev:m.Start])
		b.WriteString(render(m))
		prev = m.End
	}
	b.WriteString(body[prev:])
	return b.String(), nil
}
