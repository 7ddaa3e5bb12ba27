package codex

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parseShell parses a command line as bash (mvdan.cc/sh, as the gate does).
func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// litText is a word's value when it expands nothing (quotes removed), ""
// otherwise: enough to name a program and its options.
func litText(w *syntax.Word) string {
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

// wrappers run the program named in their arguments.
var wrappers = map[string]bool{
	"env": true, "command": true, "builtin": true, "exec": true, "nohup": true, "time": true, "nice": true,
	"ionice": true, "stdbuf": true, "timeout": true, "sudo": true, "doas": true, "setsid": true, "unbuffer": true,
}
