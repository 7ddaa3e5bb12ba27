// Package shellread finds the files a shell command line reads with the
// plain file viewers agents use (cat, head, tail, less, sed -n, grep of one
// named file), for memory-read observation.
//
// It is conservative in the direction that matters for a usage counter:
// it never reports a read it is not sure of. Any construct whose effect
// depends on the shell at run time — parameter and command substitution,
// globs, brace and tilde expansion, subshells, here-documents, input
// redirection, unknown options of a viewer, a working directory nexus cannot
// follow — makes the whole command line report nothing. Programs other than
// the viewers (scripts, interpreters, sudo, xargs) are not looked into:
// they read nothing as far as nexus knows.
package shellread

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Reads returns the files cmd reads, as cleaned absolute paths (relative
// names are resolved against cwd and any `cd` the line makes), each once, in
// order. ok is false when the line cannot be analysed with certainty; files
// is then nil. cwd must be absolute for relative names to resolve; with an
// empty cwd a relative name makes the line uncertain.
func Reads(cmd, cwd string) (files []string, ok bool) {
	segs, ok := lex(cmd)
	if !ok {
		return nil, false
	}
	an := analysis{cwd: cwd, known: true, seen: map[string]bool{}}
	for i, s := range segs {
		before := sepStart
		if i > 0 {
			before = segs[i-1].sep
		}
		if !an.segment(s, before) {
			return nil, false
		}
	}
	return an.files, true
}

// separators between simple commands
type sep int

const (
	sepStart sep = iota // before the first command
	sepEnd              // after the last command
	sepSeq              // ; or newline
	sepAnd              // &&
	sepOr               // ||
	sepPipe             // | or |&
)

type word struct {
	text string
}

type segment struct {
	words []word
	sep   sep // what follows this command
}

// lex splits a command line into simple commands of unquoted words, with
// the operator after each. It reports ok=false on anything whose effect is
// not certain from the text: a line that does not parse, compound commands,
// subshells, background jobs, negation, input redirection and here-documents,
// and any word that is not plain text after quote removal.
func lex(s string) ([]segment, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, false
	}
	var segs []segment
	for i, st := range f.Stmts {
		after := sepSeq
		if i == len(f.Stmts)-1 {
			after = sepEnd
		}
		if !flatten(st, after, &segs) {
			return nil, false
		}
	}
	return segs, true
}

// flatten appends the simple commands of a list (a && b | c ...) in order,
// each with the operator that follows it.
func flatten(st *syntax.Stmt, after sep, segs *[]segment) bool {
	if st.Background || st.Negated || st.Coprocess || st.Disown {
		return false
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if len(st.Redirs) > 0 {
			return false
		}
		op := map[syntax.BinCmdOperator]sep{syntax.AndStmt: sepAnd, syntax.OrStmt: sepOr, syntax.Pipe: sepPipe, syntax.PipeAll: sepPipe}[c.Op]
		return op != 0 && flatten(c.X, op, segs) && flatten(c.Y, after, segs)
	case *syntax.CallExpr:
		seg := segment{sep: after}
		for _, r := range st.Redirs {
			if !outputRedirect(r) {
				return false
			}
		}
		for _, a := range c.Assigns {
			if a.Append || a.Naked || a.Index != nil || a.Array != nil || (a.Value != nil && !plain(a.Value)) {
				return false
			}
		}
		for _, w := range c.Args {
			text, ok := literal(w)
			if !ok {
				return false
			}
			seg.words = append(seg.words, word{text: text})
		}
		*segs = append(*segs, seg)
		return true
	case nil:
		return len(st.Redirs) == 0
	}
	return false // if, for, while, case, { }, ( ), [[ ]], functions...
}

// outputRedirect accepts redirections of output to a plain file name or a
// file descriptor: they write, and reading is all this package reports.
func outputRedirect(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.DplOut:
		return plain(r.Word)
	}
	return false // input, here-documents, here-strings
}

func plain(w *syntax.Word) bool {
	_, ok := literal(w)
	return ok
}

// literal is a word's text after quote removal when nothing in it
// is expanded: no parameters, substitutions, globs, braces, tildes, lone $
// or history marks, and no $'...' quoting.
func literal(w *syntax.Word) (string, bool) {
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[]{}!$") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				return "", false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return "", false
				}
			}
		default:
			return "", false
		}
	}
	// Quote removal as the shell does it for an argument (expand.Literal is
	// an assignment's, which keeps backslashes).
	f, err := expand.Fields(&expand.Config{}, w)
	if err != nil || len(f) != 1 {
		return "", false
	}
	return f[0], true
}

type analysis struct {
	cwd   string
	known bool // cwd is certain for the next command
	chain bool // cwd was set by a cd whose && chain is still running
	files []string
	seen  map[string]bool
}

// shellKeywords start compound commands nexus does not follow.
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"for": true, "while": true, "until": true, "do": true, "done": true,
	"case": true, "esac": true, "select": true, "function": true,
	"coproc": true, "[[": true, "]]": true, "time": true,
}

func (an *analysis) segment(s segment, before sep) bool {
	words := s.words // assignments before the name are not words (lex)
	if len(words) > 0 {
		name := words[0].text
		if shellKeywords[name] {
			return false
		}
		args := make([]string, len(words)-1)
		for i, w := range words[1:] {
			args[i] = w.text
		}
		switch name {
		case "cd":
			an.cd(args, before, s.sep)
			return true // cd decides about the chain itself
		case "pushd", "popd":
			an.known = false
		default:
			files, ok := viewerReads(commandName(name), args)
			if !ok {
				return false
			}
			for _, f := range files {
				if !an.add(f) {
					return false
				}
			}
		}
	}
	an.after(s.sep)
	return true
}

// after ends a cd's reach: the directory it set holds along its && chain
// (pipelines included) and is uncertain after ;, || or a newline, where
// the next command runs whether or not the cd succeeded.
func (an *analysis) after(next sep) {
	if an.chain && next != sepAnd && next != sepPipe {
		an.chain, an.known = false, false
	}
}

// cd follows `cd DIR && …`, the one form whose effect is certain for the
// commands chained after it. Any other cd leaves the directory unknown.
func (an *analysis) cd(args []string, before, next sep) {
	if len(args) == 2 && args[0] == "--" {
		args = args[1:]
	}
	certain := len(args) == 1 && args[0] != "" && !strings.HasPrefix(args[0], "-") &&
		next == sepAnd && before != sepOr && before != sepPipe && an.known
	if !certain {
		an.known, an.chain = false, false
		return
	}
	dir := args[0]
	if !filepath.IsAbs(dir) {
		if an.cwd == "" {
			an.known, an.chain = false, false
			return
		}
		dir = filepath.Join(an.cwd, dir)
	}
	an.cwd, an.chain = filepath.Clean(dir), true
}

func (an *analysis) add(f string) bool {
	if !filepath.IsAbs(f) {
		if !an.known || an.cwd == "" {
			return false
		}
		f = filepath.Join(an.cwd, f)
	}
	f = filepath.Clean(f)
	if !an.seen[f] {
		an.seen[f] = true
		an.files = append(an.files, f)
	}
	return true
}

// commandName maps /bin/cat and /usr/bin/cat to cat; other paths stay
// themselves (and so are not viewers).
func commandName(name string) string {
	for _, dir := range []string{"/bin/", "/usr/bin/", "/usr/local/bin/"} {
		if rest, ok := strings.CutPrefix(name, dir); ok && !strings.Contains(rest, "/") {
			return rest
		}
	}
	return name
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
