package codex

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nexus-harness/nexus/harness/applypatch"
	"github.com/nexus-harness/nexus/harness/gate"
)

// What the gate cannot learn from a Codex tool's classes alone, read from
// the call (gate.Analyzer): the files a patch adds, changes and deletes, and
// shell commands that a hook never sees the rest of.

// Analyzers are Codex's gate analyzers by tool name.
func Analyzers() map[string]gate.Analyzer {
	return map[string]gate.Analyzer{
		ToolApplyPatch: analyzePatchTool,
		ToolShell:      analyzeShell,
	}
}

// patchEffect is what a patch's operations do, for the gate: the paths
// they add, change, move and delete (the classes are the tool's own; for
// the shell, those of a file edit).
func patchEffect(ops []applypatch.FileOp, why string) gate.Effect {
	var e gate.Effect
	seen := map[string]bool{}
	for _, op := range ops {
		for _, ef := range op.Effects() {
			if !seen[ef.Path] {
				seen[ef.Path] = true
				e.Files = append(e.Files, ef.Path)
			}
		}
	}
	if len(e.Files) > 0 {
		e.Classes, e.Why = []string{classModify}, []string{why}
	}
	return e
}

// classModify is the class of a call writing files nexus cannot name.
const classModify = "file_modification"

// unreadable is the effect of a patch whose files cannot be named: the gate
// treats the call as writing unknown files, so it fails closed.
func unreadable(why string) gate.Effect {
	return gate.Effect{Classes: []string{classModify}, Unknown: true, Why: []string{why}}
}

// analyzePatchTool reads an apply_patch call: each Add, Update (and Move)
// and Delete File section of its patch.
func analyzePatchTool(input map[string]any) gate.Effect {
	ops, _, err := ToolFileOps(ToolApplyPatch, input)
	if err != nil {
		return unreadable("the patch could not be read (" + err.Error() + "), so the files it changes cannot be named")
	}
	return patchEffect(ops, "a patch")
}

// analyzeShell reads a shell command for what Codex's hooks never show:
// apply_patch through the shell (its patch's files), and a command left
// reading its input, which write_stdin can feed without a hook.
func analyzeShell(input map[string]any) gate.Effect {
	ops, found, err := ToolFileOps(ToolShell, input)
	var e gate.Effect
	switch {
	case err != nil:
		e = unreadable(err.Error())
	case found:
		e = patchEffect(ops, "apply_patch through the shell")
	}
	if cmd, ok := input["command"].(string); ok {
		if name := ReadsCommands(cmd); name != "" {
			u := unreadable(name + " is left reading commands from its input, which Codex's write_stdin can send without any hook seeing them; run the script with -c, from a file or from a heredoc instead")
			e.Classes = append(e.Classes, u.Classes...)
			e.Unknown = true
			e.Why = append(e.Why, u.Why...)
		}
	}
	return e
}

// Unfollowed reports a call whose effects Codex reports to no PostToolUse:
// the apply_patch heredoc its shell tool intercepts and applies itself
// (lifecycle.HostProfile.Unfollowed).
func Unfollowed(tool string, input map[string]any) bool {
	if tool != ToolShell {
		return false
	}
	cmd, ok := input["command"].(string)
	return ok && applypatch.Intercepted(cmd)
}

// interpreters read and run commands from their input when given no
// script; the value lists the options that give them one inline. Built
// on first use: a hook process of another host never needs it.
var interpreters = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"sh": nil, "bash": nil, "zsh": nil, "dash": nil, "ksh": nil, "mksh": nil, "ash": nil, "fish": nil, "csh": nil, "tcsh": nil,
		"python": {"-c", "-m"}, "python2": {"-c", "-m"}, "python3": {"-c", "-m"}, "ipython": {"-c", "-m"}, "pypy": {"-c", "-m"}, "pypy3": {"-c", "-m"},
		"node": {"-e", "-p", "--eval", "--print"}, "nodejs": {"-e", "-p", "--eval", "--print"}, "deno": {"eval", "run"}, "bun": {"-e", "--eval", "run"},
		"ruby": {"-e"}, "irb": nil, "perl": {"-e", "-E"}, "php": {"-r"}, "lua": {"-e"}, "luajit": {"-e"}, "tclsh": nil,
		"R": {"-e"}, "julia": {"-e", "-E"}, "ghci": {"-e"},
	}
})

// shellInterpreters take -c in any option cluster (-lc).
func shellInterpreter(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh":
		return true
	}
	return false
}

// ReadsCommands names the shell or interpreter a command line leaves
// reading commands from its input (no script operand, no inline script, no
// input redirected or piped in, or -i), "" when there is none. Codex's
// exec_command keeps such a process running, and write_stdin sends it
// lines that no hook sees.
func ReadsCommands(command string) string {
	f, err := ParseShell(command)
	if err != nil {
		return ""
	}
	fed := map[*syntax.Stmt]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			fed[b.Y] = true
		}
		return true
	})
	found := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || found != "" {
			return found == ""
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || fed[st] || stdinRedirected(st) {
			return true
		}
		if name := interactiveCall(call.Args); name != "" {
			found = name
		}
		return true
	})
	return found
}

func stdinRedirected(st *syntax.Stmt) bool {
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			return true
		}
	}
	return false
}

// interactiveCall reads one command's words: wrappers (env, nohup, sudo …)
// with their options and assignments are skipped to the program they run.
func interactiveCall(args []*syntax.Word) string {
	i := 0
	for i < len(args) {
		w := LitText(args[i])
		name := path.Base(w)
		switch {
		case i > 0 && (strings.HasPrefix(w, "-") || strings.Contains(w, "=") || isNumberish(w)):
			i++
			continue
		case wrapper(name):
			i++
			continue
		}
		opts, ok := interpreters()[name]
		if !ok {
			return ""
		}
		for _, a := range args[i+1:] {
			t := LitText(a)
			switch {
			case t == "-i" || (shellInterpreter(name) && t == "-s"):
				return name
			case t == "" && a != nil:
				return "" // an expansion: a script nexus cannot name, not stdin
			case shellInterpreter(name) && strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "c"):
				return ""
			case strings.HasPrefix(t, "-"):
				for _, o := range opts {
					if t == o || strings.HasPrefix(t, o+"=") {
						return ""
					}
				}
			default:
				for _, o := range opts {
					if t == o { // a subcommand that takes the script (deno eval)
						return ""
					}
				}
				return "" // a script file operand
			}
		}
		return name
	}
	return ""
}

// isNumberish matches timeout's durations and nice's levels (10, 1.5s).
func isNumberish(s string) bool {
	if s == "" {
		return false
	}
	digits := strings.TrimRight(s, "smhd")
	for _, c := range digits {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return digits != ""
}
