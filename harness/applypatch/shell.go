package applypatch

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A model can send a patch through Codex's shell tool instead of its
// apply_patch tool: `apply_patch <<'EOF' … EOF`. Hooks see that as a "Bash"
// call, with a PreToolUse and no PostToolUse. Two cases:
//
//   - The whole command is `apply_patch <<DELIM … DELIM` or `cd DIR &&
//     apply_patch <<DELIM … DELIM` (Codex's own test, codex-rs/apply-patch
//     invocation.rs: one top-level statement, a plain `cd` with one
//     argument, `&&`). Codex intercepts it and applies the heredoc's text as
//     written, relative to DIR.
//   - Anywhere else in a command line, apply_patch is a program on Codex's
//     PATH that the shell runs: it reads its patch from its one argument or
//     from stdin, after the shell's own expansions.
//
// InShell reads both with mvdan.cc/sh (the parser harness/gate uses)
// and fails closed wherever the files written cannot be named: a patch from
// a file, a pipe or an expansion, an unquoted heredoc that expands
// something, apply_patch run through another program (env, xargs, sudo …),
// or a command line that changes directory elsewhere than in Codex's form.

// patchCommands are the names Codex runs (and intercepts) as apply_patch.
var patchCommands = map[string]bool{"apply_patch": true, "applypatch": true}

// dirCommands change the shell's working directory.
var dirCommands = map[string]bool{"cd": true, "pushd": true, "popd": true}

// patchWrappers run the command named in their arguments: apply_patch
// behind one of them gets input nexus cannot follow.
var patchWrappers = map[string]bool{
	"env": true, "command": true, "builtin": true, "exec": true, "nohup": true, "time": true, "nice": true,
	"ionice": true, "stdbuf": true, "timeout": true, "sudo": true, "doas": true, "xargs": true, "setsid": true,
	"chronic": true, "unbuffer": true, "caffeinate": true, "watch": true, "flock": true, "script": true,
}

var patchShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true}

// maxPatchShellDepth bounds recursion through sh -c and eval.
const maxPatchShellDepth = 8

// InShell finds the apply_patch (or applypatch) commands of a shell
// command line and returns the file operations of their patches, paths
// relative to the working directory (or absolute). found reports whether
// the line runs apply_patch at all (a patch may add nothing). An error
// means apply_patch runs but what it writes cannot be named: the gate must
// deny the call. A line that does not parse as bash is left to the gate's
// shell analysis, which counts it as writing unknown files.
func InShell(command string) (ops []FileOp, found bool, err error) {
	s := &shellPatchScan{}
	f, perr := parseShell(command)
	if perr != nil {
		return nil, false, nil
	}
	s.file(command, f, false, 0)
	return s.ops, s.found, s.err
}

// Intercepted reports whether a whole command line is the form a host's
// shell tool applies itself instead of running it (Codex: `apply_patch
// <<DELIM` or `cd DIR && apply_patch <<DELIM`; see intercepted), whether
// or not its patch reads. Such a call never runs in a shell, so a host may
// report it to no post-tool event.
func Intercepted(command string) bool {
	f, err := parseShell(command)
	if err != nil {
		return false
	}
	_, ok, _ := intercepted(command, f)
	return ok
}

type shellPatchScan struct {
	ops   []FileOp
	found bool
	err   error
}

func (s *shellPatchScan) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
	}
}

func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// file scans one parsed script. movedDir is true when an enclosing script
// changed directory before running this one.
func (s *shellPatchScan) file(src string, f *syntax.File, movedDir bool, depth int) {
	if depth > maxPatchShellDepth {
		if mentionsPatch(src) {
			s.fail("apply_patch nested in shells too deeply to read")
		}
		return
	}
	if depth == 0 {
		if ops, ok, err := intercepted(src, f); ok {
			s.found = true
			if err != nil {
				s.fail("%v", err)
			}
			s.ops = append(s.ops, ops...)
			return
		}
	}
	// Any change of directory in the script makes relative patch paths
	// ambiguous: the shell runs apply_patch wherever the script has gone.
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 && changesDir(call) {
			movedDir = true
		}
		return true
	})
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		name := path.Base(litText(call.Args[0]))
		switch {
		case patchCommands[name]:
			s.found = true
			if movedDir {
				s.fail("the command line changes directory and runs %s, so the files its patch names cannot be placed: run `cd DIR && %s <<'EOF' … EOF` alone, or use the apply_patch tool", name, name)
				return true
			}
			ops, err := shellRun(src, st, call)
			if err != nil {
				s.fail("%s: %v", name, err)
			}
			s.ops = append(s.ops, ops...)
		case patchShells[name]:
			s.nestedShell(src, st, call.Args[1:], movedDir, depth)
		case name == "eval":
			s.nested(src, call.Args[1:], movedDir, depth)
		case patchWrappers[name]:
			rest := call.Args[1:]
			if name == "command" && len(rest) > 0 && (litText(rest[0]) == "-v" || litText(rest[0]) == "-V") {
				return true // a lookup, not a run
			}
			for _, w := range rest {
				if patchCommands[path.Base(litText(w))] {
					s.found = true
					s.fail("%s runs %s with input nexus cannot follow: run apply_patch directly with a quoted heredoc, or use the apply_patch tool", name, litText(w))
				}
			}
		}
		return true
	})
}

// changesDir reports a command that may change the shell's directory: cd,
// pushd, popd, also behind a wrapper or in eval, and source (whose script
// nexus does not read).
func changesDir(call *syntax.CallExpr) bool {
	name := path.Base(litText(call.Args[0]))
	switch {
	case dirCommands[name], name == "source", name == ".":
		return true
	case patchWrappers[name], name == "eval":
		for _, w := range call.Args[1:] {
			t := litText(w)
			if dirCommands[path.Base(t)] || strings.Contains(t, "cd ") || strings.Contains(t, "pushd ") || strings.Contains(t, "popd") {
				return true
			}
		}
	}
	return false
}

// nestedShell scans the script a shell runs: the argument of -c (any
// option cluster with c, as in -lc), or its stdin from a heredoc or a
// here-string. A shell reading a script nexus cannot see (a pipe, a file
// redirection) while the line mentions apply_patch fails closed; a script
// file argument is an execution, which the gate judges on its own.
func (s *shellPatchScan) nestedShell(src string, st *syntax.Stmt, args []*syntax.Word, movedDir bool, depth int) {
	for i, w := range args {
		t := litText(w)
		if !strings.HasPrefix(t, "-") {
			return // a script file (or an expansion naming one)
		}
		if strings.HasPrefix(t, "--") || !strings.Contains(t, "c") {
			continue
		}
		if i+1 < len(args) {
			s.nested(src, args[i+1:i+2], movedDir, depth)
		}
		return
	}
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body, err := heredocText(src, r)
			if err != nil {
				if mentionsPatch(hdocRaw(src, r)) {
					s.found = true
					s.fail("a shell script in a heredoc runs apply_patch: %v", err)
				}
				return
			}
			s.script(body, movedDir, depth)
			return
		case syntax.WordHdoc:
			s.nested(src, []*syntax.Word{r.Word}, movedDir, depth)
			return
		}
	}
	if mentionsPatch(src) {
		s.found = true
		s.fail("a shell reads a script nexus cannot see on a line that mentions apply_patch")
	}
}

// nested scans the words of eval or sh -c as a script of their own.
func (s *shellPatchScan) nested(src string, words []*syntax.Word, movedDir bool, depth int) {
	var parts []string
	for _, w := range words {
		v, ok := literal(w)
		if !ok {
			if mentionsPatch(src[w.Pos().Offset():w.End().Offset()]) {
				s.found = true
				s.fail("apply_patch inside a script built from expansions cannot be read")
			}
			return
		}
		parts = append(parts, v)
	}
	s.script(strings.Join(parts, " "), movedDir, depth)
}

// script parses and scans a nested script.
func (s *shellPatchScan) script(script string, movedDir bool, depth int) {
	f, err := parseShell(script)
	if err != nil {
		if mentionsPatch(script) {
			s.found = true
			s.fail("a nested script that runs apply_patch does not parse: %v", err)
		}
		return
	}
	s.file(script, f, movedDir, depth+1)
}

// mentionsPatch is a plain-text test, used only where nothing parsed.
func mentionsPatch(s string) bool {
	return strings.Contains(s, "apply_patch") || strings.Contains(s, "applypatch")
}

// intercepted recognises the forms Codex applies itself: the whole script
// is `apply_patch <<DELIM` (no arguments) or `cd DIR && apply_patch
// <<DELIM`, DIR one plain word or quoted string. The heredoc's text is the
// patch, as written.
func intercepted(src string, f *syntax.File) ([]FileOp, bool, error) {
	if len(f.Stmts) != 1 {
		return nil, false, nil
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess {
		return nil, false, nil
	}
	dir := ""
	patch := st
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) != 1 {
			return nil, false, nil
		}
	case *syntax.BinaryCmd:
		if c.Op != syntax.AndStmt || len(st.Redirs) > 0 {
			return nil, false, nil
		}
		cd, ok := c.X.Cmd.(*syntax.CallExpr)
		if !ok || c.X.Negated || len(c.X.Redirs) > 0 || len(cd.Assigns) > 0 || len(cd.Args) != 2 || plainLit(cd.Args[0]) != "cd" {
			return nil, false, nil
		}
		d, ok := cdArg(cd.Args[1])
		if !ok {
			return nil, false, nil
		}
		dir, patch = d, c.Y
	default:
		return nil, false, nil
	}
	call, ok := patch.Cmd.(*syntax.CallExpr)
	if !ok || patch.Negated || len(call.Assigns) > 0 || len(call.Args) == 0 || !patchCommands[plainLit(call.Args[0])] || len(patch.Redirs) != 1 {
		return nil, false, nil
	}
	r := patch.Redirs[0]
	if (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || r.Hdoc == nil || (r.N != nil && r.N.Value != "0") {
		return nil, false, nil
	}
	ops, err := Parse(strings.TrimRight(hdocRaw(src, r), "\n"))
	if err != nil {
		return nil, true, err
	}
	for i := range ops {
		ops[i].Path = within(dir, ops[i].Path)
		ops[i].MoveTo = within(dir, ops[i].MoveTo)
	}
	return ops, true, nil
}

// cdArg is the directory of Codex's `cd DIR &&` form: a plain word, a
// double-quoted string without expansions or a single-quoted one.
func cdArg(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if strings.ContainsAny(p.Value, "*?[~{\\") {
			return "", false
		}
		return p.Value, p.Value != ""
	case *syntax.SglQuoted:
		return p.Value, !p.Dollar && p.Value != ""
	case *syntax.DblQuoted:
		if len(p.Parts) != 1 {
			return "", false
		}
		l, ok := p.Parts[0].(*syntax.Lit)
		if !ok || strings.ContainsRune(l.Value, '\\') || l.Value == "" {
			return "", false
		}
		return l.Value, true
	}
	return "", false
}

// shellRun reads the patch of an apply_patch the shell runs: its one
// argument, or its stdin from a heredoc or a here-string.
func shellRun(src string, st *syntax.Stmt, call *syntax.CallExpr) ([]FileOp, error) {
	args := call.Args[1:]
	var stdin []*syntax.Redirect
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			stdin = append(stdin, r)
		}
	}
	var text string
	switch {
	case len(args) > 1:
		return nil, fmt.Errorf("takes one patch, but got %d arguments", len(args))
	case len(args) == 1:
		v, ok := literal(args[0])
		if !ok {
			return nil, fmt.Errorf("its patch argument is built from expansions, so nexus cannot read it")
		}
		text = v
	case len(stdin) == 0:
		return nil, fmt.Errorf("no patch nexus can read: it would come from a pipe or the terminal; give the patch in a quoted heredoc (apply_patch <<'EOF' … EOF)")
	case len(stdin) > 1:
		return nil, fmt.Errorf("more than one input redirection")
	default:
		r := stdin[0]
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body, err := heredocText(src, r)
			if err != nil {
				return nil, err
			}
			text = body
		case syntax.WordHdoc:
			v, ok := literal(r.Word)
			if !ok {
				return nil, fmt.Errorf("its here-string is built from expansions, so nexus cannot read it")
			}
			text = v
		default:
			return nil, fmt.Errorf("it reads its patch from %s, which nexus does not read; give the patch in a quoted heredoc", describeWord(src, r.Word))
		}
	}
	return Parse(text)
}

// heredocText is the text a heredoc feeds: as written when its delimiter
// is quoted; an unquoted one must expand nothing (no $, no command
// substitution, no backslash-newline), so that its text is what the shell
// passes on. <<- drops leading tabs.
func heredocText(src string, r *syntax.Redirect) (string, error) {
	if r.Hdoc == nil {
		return "", nil // an empty heredoc
	}
	body := hdocRaw(src, r)
	if !quotedDelim(r.Word) {
		for _, p := range r.Hdoc.Parts {
			if _, ok := p.(*syntax.Lit); !ok {
				return "", fmt.Errorf("its heredoc is not quoted and expands something, so nexus cannot read the patch; quote the delimiter (<<'EOF')")
			}
		}
		if strings.Contains(body, "\\\n") {
			return "", fmt.Errorf("its heredoc is not quoted and joins lines with a backslash, so nexus cannot read the patch; quote the delimiter (<<'EOF')")
		}
	}
	if r.Op == syntax.DashHdoc {
		lines := strings.Split(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		body = strings.Join(lines, "\n")
	}
	return body, nil
}

// hdocRaw is a heredoc's body as written, without its closing delimiter
// line (mvdan's span of the body ends after the delimiter).
func hdocRaw(src string, r *syntax.Redirect) string {
	if r.Hdoc == nil {
		return ""
	}
	span := src[r.Hdoc.Pos().Offset():r.Hdoc.End().Offset()]
	return span[:strings.LastIndexByte(span, '\n')+1]
}

// quotedDelim reports whether a heredoc delimiter has any quoting, which
// turns off expansion in the body.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		}
	}
	return false
}

// literal returns a word's value when it involves no expansion (quotes
// removed), as harness/gate's shell analysis and memory/shellread do.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
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
	f, err := expand.Fields(&expand.Config{}, w)
	if err != nil || len(f) != 1 {
		return "", false
	}
	return f[0], true
}

// litText is a word's literal value, or "" when it has none.
func litText(w *syntax.Word) string {
	v, _ := literal(w)
	return v
}

// plainLit is the text of a word that is one unquoted literal (how Codex's
// own test matches a command name), or "".
func plainLit(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok {
		return l.Value
	}
	return ""
}

func describeWord(src string, w *syntax.Word) string {
	if w == nil {
		return "another file descriptor"
	}
	return src[w.Pos().Offset():w.End().Offset()]
}
