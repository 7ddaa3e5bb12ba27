package gate

import (
	"sort"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ShellEffect is what a command line does to files, as far as nexus can
// tell from the text alone.
//
// The analysis is conservative about syntax: a line that cannot be parsed,
// a recognised writer whose target is an expansion ($VAR, a glob, a command
// substitution), or inline interpreter code that looks like it writes are
// all counted as writes. What it does not try is to see inside programs the
// line merely runs (scripts, make, test runners): those are executions,
// which no_shell_exec governs, not edits.
type ShellEffect struct {
	// Writes is true when the command creates, modifies or deletes files.
	Writes bool
	// Targets are the literal paths written, as spelled in the command.
	Targets []string
	// Unknown is true when some write's target cannot be named.
	Unknown bool
	// Classes are the no_file_edit classes of the writes.
	Classes []string
	// Reasons say, in words, why the command counts as writing.
	Reasons []string
}

// AnalyzeShell parses a shell command line (bash, which covers POSIX sh)
// and reports its writes. The parsing is mvdan.cc/sh's; what each command
// writes is in commands.go.
func AnalyzeShell(cmd string) ShellEffect {
	a := &shellAnalysis{}
	a.script(cmd, 0)
	return a.result()
}

type shellAnalysis struct {
	writes  bool
	unknown bool
	targets []string
	classes map[string]bool
	reasons []string
}

func (a *shellAnalysis) result() ShellEffect {
	e := ShellEffect{Writes: a.writes, Unknown: a.unknown}
	seen := map[string]bool{}
	for _, t := range a.targets {
		if !seen[t] {
			seen[t] = true
			e.Targets = append(e.Targets, t)
		}
	}
	for c := range a.classes {
		e.Classes = append(e.Classes, c)
	}
	sort.Strings(e.Classes)
	seenR := map[string]bool{}
	for _, r := range a.reasons {
		if !seenR[r] {
			seenR[r] = true
			e.Reasons = append(e.Reasons, r)
		}
	}
	return e
}

// write records one write. target == nil means the target is unknown.
func (a *shellAnalysis) write(reason string, target *word, classes ...string) {
	a.writes = true
	if a.classes == nil {
		a.classes = map[string]bool{}
	}
	for _, c := range classes {
		a.classes[c] = true
	}
	if target == nil || !target.literal || target.text == "" {
		a.unknown = true
	} else {
		a.targets = append(a.targets, target.text)
	}
	a.reasons = append(a.reasons, reason)
}

func (a *shellAnalysis) writeUnknown(reason string, classes ...string) {
	a.write(reason, nil, classes...)
}

// maxShellDepth bounds recursion through sh -c, eval and heredocs fed to a
// shell: each is parsed again as a script of its own.
const maxShellDepth = 8

// script parses src and analyses every command in it, those inside
// command and process substitutions, compound commands and function
// bodies included. A line that does not parse counts as writing: the gate
// fails closed.
func (a *shellAnalysis) script(src string, depth int) {
	if depth > maxShellDepth {
		a.writeUnknown("command nests shells too deeply to analyse", "file_modification")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.writeUnknown("could not parse the command ("+err.Error()+"); treated as writing", "file_modification")
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		redirs := make([]redirect, 0, len(st.Redirs))
		for _, r := range st.Redirs {
			rd := toRedirect(src, r)
			a.redirect(rd)
			redirs = append(redirs, rd)
		}
		if call, ok := st.Cmd.(*syntax.CallExpr); ok {
			words := make([]word, len(call.Args))
			for i, w := range call.Args {
				words[i] = toWord(src, w)
			}
			a.exec(words, redirs, depth)
		}
		return true // the walk goes on into substitutions and bodies
	})
}

// word is one shell word after quote removal. literal is false when the
// word's value depends on an expansion nexus does not perform.
type word struct {
	text    string
	literal bool
	// procsub marks a process substitution <(...) / >(...) standing as a
	// word: its commands are analysed where it appears.
	procsub bool
}

type redirect struct {
	op      string  // >, >>, >|, <, <<, <<-, <<<, <>, >&, <&, &>, &>>
	target  word    // the word after the operator (a heredoc's delimiter)
	heredoc *string // body of << and <<- (and the string of <<<)
}

func toRedirect(src string, r *syntax.Redirect) redirect {
	rd := redirect{op: r.Op.String()}
	if r.Word != nil {
		rd.target = toWord(src, r.Word)
	}
	switch {
	case r.Hdoc != nil:
		// The body as written: inline code is matched as text, and a
		// quoted delimiter leaves it unexpanded anyway.
		body := src[r.Hdoc.Pos().Offset():r.Hdoc.End().Offset()]
		rd.heredoc = &body
	case r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc:
		empty := ""
		rd.heredoc = &empty
	case r.Op == syntax.WordHdoc:
		s := rd.target.text
		rd.heredoc = &s
	}
	return rd
}

// toWord removes quotes from a word and notes whether its value depends on
// an expansion: parameters, command, arithmetic or process substitution,
// globs, brace and tilde expansion, ANSI-C quoting. A plain word's text is
// mvdan's quote removal; an expanded one keeps its source text, for option
// matching (--output=$OUT) and messages.
func toWord(src string, w *syntax.Word) word {
	if len(w.Parts) == 1 {
		if _, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			return word{procsub: true}
		}
	}
	literal := true
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") || (i == 0 && strings.HasPrefix(p.Value, "~")) || hasBraceExpansion(p.Value) {
				literal = false
			}
		case *syntax.SglQuoted:
			literal = literal && !p.Dollar
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					literal = false
				}
			}
		default:
			literal = false
		}
	}
	if literal {
		// Quote removal as the shell does it for an argument (expand.Literal
		// is an assignment's, which keeps backslashes).
		if f, err := expand.Fields(&expand.Config{}, w); err == nil && len(f) == 1 {
			return word{text: f[0], literal: true}
		}
	}
	return word{text: src[w.Pos().Offset():w.End().Offset()]}
}

// hasBraceExpansion reports an unquoted a{b,c} or {1..3}, which expands to
// several words (the parser leaves braces as literal text).
func hasBraceExpansion(s string) bool {
	for i := strings.IndexByte(s, '{'); i >= 0 && i < len(s); {
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return false
		}
		inner := s[i+1 : i+end]
		if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
			return true
		}
		next := strings.IndexByte(s[i+1:], '{')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}
