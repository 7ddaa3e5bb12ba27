package codex

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ParseShell parses a command line as bash (mvdan.cc/sh, as the gate does).
func ParseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// LitText is a word's value when it expands nothing (quotes removed), ""
// otherwise: enough to name a program and its options.
func LitText(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{~\\") {
				return ""
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return ""
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return ""
				}
				b.WriteString(l.Value)
			}
		default:
			return ""
		}
	}
	return b.String()
}

// wrapper reports whether name runs the program named in its arguments.
func wrapper(name string) bool {
	switch name {
	case "env", "command", "builtin", "exec", "nohup", "time", "nice",
		"ionice", "stdbuf", "timeout", "sudo", "doas", "setsid", "unbuffer":
		return true
	}
	return false
}
