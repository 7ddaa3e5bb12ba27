package applypatch

import (
	"reflect"
	"strings"
	"testing"
)

// heredocPatch is the command the e2e sends through exec_command
// (TestE2ECodexHookBehaviour), as hooks saw it.
const heredocPatch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: heredoc.txt\n+from the shell\n*** End Patch\nEOF\n"

func patchText(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }

func TestShellPatches(t *testing.T) {
	addQ := patchText("*** Add File: q.txt\n+x\n")
	for _, c := range []struct {
		name, cmd string
		want      []FileOp
	}{
		{"real heredoc", heredocPatch, ops(add("heredoc.txt"))},
		{"applypatch", "applypatch <<'EOF'\n" + addQ + "EOF", ops(add("q.txt"))},
		{"unquoted delimiter", "apply_patch <<EOF\n" + addQ + "EOF\n", ops(add("q.txt"))},
		{"double-quoted delimiter", "apply_patch <<\"EOF\"\n" + addQ + "EOF\n", ops(add("q.txt"))},
		{"cd form", "cd sub/dir && apply_patch <<'EOF'\n" + patchText("*** Update File: a.go\n@@\n-a\n+b\n*** Add File: /abs/x\n+1\n") + "EOF\n",
			ops(upd("sub/dir/a.go"), add("/abs/x"))},
		{"cd form, quoted dir", "cd \"my dir\" && apply_patch <<'EOF'\n" + addQ + "EOF\n", ops(add("my dir/q.txt"))},
		{"cd form, single-quoted dir", "cd 'a b' && apply_patch <<'EOF'\n" + patchText("*** Update File: x\n*** Move to: ../y\n@@\n-1\n+2\n") + "EOF\n",
			ops(move("a b/x", "y"))},
		{"Codex applies the intercepted text as written", "apply_patch <<EOF\n" + patchText("*** Add File: $HOME.txt\n+x\n") + "EOF\n", ops(add("$HOME.txt"))},
		{"run by the shell after another command", "echo start && apply_patch <<'EOF'\n" + addQ + "EOF\necho done", ops(add("q.txt"))},
		{"two patches", "apply_patch <<'A'\n" + addQ + "A\napply_patch <<'B'\n" + patchText("*** Delete File: old\n") + "B\n", ops(add("q.txt"), del("old"))},
		{"dash heredoc run by the shell drops tabs", "true && apply_patch <<-'EOF'\n\t*** Begin Patch\n\t*** Add File: t.txt\n\t+x\n\t*** End Patch\n\tEOF\n", ops(add("t.txt"))},
		{"absolute program path", "/usr/local/bin/apply_patch <<'EOF'\n" + addQ + "EOF\n", ops(add("q.txt"))},
		{"patch as the argument", "apply_patch '" + addQ + "'", ops(add("q.txt"))},
		{"here-string", "apply_patch <<< '" + addQ + "'", ops(add("q.txt"))},
		{"through bash -lc", "bash -lc \"apply_patch <<'EOF'\n" + addQ + "EOF\n\"", ops(add("q.txt"))},
		{"through sh -c in a pipeline", "true | sh -c 'apply_patch <<\"EOF\"\n" + addQ + "EOF\n'", ops(add("q.txt"))},
		{"through eval", "eval 'apply_patch <<\"EOF\"\n" + addQ + "EOF\n'", ops(add("q.txt"))},
		{"script fed to a shell in a heredoc", "bash <<'OUTER'\napply_patch <<'EOF'\n" + addQ + "EOF\nOUTER\n", ops(add("q.txt"))},
		{"empty patch", "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF", nil},
		{"inside a command substitution", "x=$(apply_patch <<'EOF'\n" + addQ + "EOF\n)", ops(add("q.txt"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, found, err := InShell(c.cmd)
			if err != nil || !found {
				t.Fatalf("InShell = %+v, found %v, %v", got, found, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ops\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestShellPatchesFailClosed(t *testing.T) {
	addQ := patchText("*** Add File: q.txt\n+x\n")
	for _, c := range []struct{ name, cmd, want string }{
		{"cd then ;", "cd sub; apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"cd in a subshell", "(cd sub && apply_patch <<'EOF'\n" + addQ + "EOF\n)", "changes directory"},
		{"cd after the patch elsewhere", "echo x && apply_patch <<'EOF'\n" + addQ + "EOF\ncd /", "changes directory"},
		{"pushd", "pushd sub && apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"cd before a nested shell", "cd sub && bash -c \"apply_patch <<'EOF'\n" + addQ + "EOF\n\"", "changes directory"},
		{"cd inside a nested shell", "sh -c \"cd sub && apply_patch <<'EOF'\n" + addQ + "EOF\n\"", "changes directory"},
		{"cd behind builtin", "builtin cd sub; apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"cd in eval", "eval 'cd sub'; apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"source", "source env.sh && apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"cd in a function", "f() { cd sub; }; f; apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"cd to an expansion", "cd $DIR && apply_patch <<'EOF'\n" + addQ + "EOF\n", "changes directory"},
		{"unquoted heredoc with an expansion", "true && apply_patch <<EOF\n" + patchText("*** Add File: $NAME\n+x\n") + "EOF\n", "expands something"},
		{"unquoted heredoc with a command substitution", "true && apply_patch <<EOF\n" + patchText("*** Add File: $(name)\n+x\n") + "EOF\n", "expands something"},
		{"unquoted heredoc joining lines", "true && apply_patch <<EOF\n*** Begin Patch\n*** Add File: a\\\n.txt\n+x\n*** End Patch\nEOF\n", "backslash"},
		{"patch from a file", "apply_patch < change.patch", "reads its patch from change.patch"},
		{"patch from a pipe", "cat change.patch | apply_patch", "no patch nexus can read"},
		{"no patch at all", "apply_patch", "no patch nexus can read"},
		{"argument from an expansion", "apply_patch \"$PATCH\"", "built from expansions"},
		{"two arguments", "apply_patch a b", "2 arguments"},
		{"here-string from an expansion", "apply_patch <<< \"$P\"", "built from expansions"},
		{"through env", "env X=1 apply_patch <<'EOF'\n" + addQ + "EOF\n", "env runs apply_patch"},
		{"through xargs", "ls | xargs apply_patch", "xargs runs apply_patch"},
		{"through sudo", "sudo apply_patch <<'EOF'\n" + addQ + "EOF\n", "sudo runs apply_patch"},
		{"script from an expansion", "bash -c \"$SCRIPT apply_patch\"", "built from expansions"},
		{"script from a pipe", "echo 'apply_patch <<EOF' | sh", "cannot see"},
		{"bad patch, intercepted", "apply_patch <<'EOF'\n*** Begin Patch\n*** Frobnicate: x\n*** End Patch\nEOF\n", "not a hunk header"},
		{"bad patch, run by the shell", "true && apply_patch <<'EOF'\nnot a patch\nEOF\n", "first line"},
		{"dash heredoc intercepted keeps tabs, as Codex does", "apply_patch <<-'EOF'\n\t*** Begin Patch\n\t*** Add File: t\n\t+x\n\t*** End Patch\n\tEOF\n", "not a hunk header"},
		{"nested script does not parse", "bash -c 'apply_patch <<EOF\n$('", "does not parse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, found, err := InShell(c.cmd)
			if err == nil || !found {
				t.Fatalf("InShell = %+v, found %v, %v; want an error", got, found, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func TestShellPatchesNotAPatch(t *testing.T) {
	for _, cmd := range []string{
		"ls -la",
		"grep -rn apply_patch .",
		"echo apply_patch",
		"command -v apply_patch",
		"cd sub && make test",
		"git apply fix.patch",
		"echo 'unterminated",            // does not parse: left to the gate's analysis
		"cat <<'EOF'\napply_patch\nEOF", // text, not a command
		"bash script.sh",
		"",
	} {
		got, found, err := InShell(cmd)
		if found || err != nil || got != nil {
			t.Errorf("InShell(%q) = %+v, found %v, %v; want nothing", cmd, got, found, err)
		}
	}
}

func BenchmarkShellPatches(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, found, err := InShell(heredocPatch); err != nil || !found {
			b.Fatal(err)
		}
	}
}

func TestIntercepted(t *testing.T) {
	heredoc := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\nEOF\n"
	for cmd, want := range map[string]bool{
		heredoc:                    true,
		"cd sub && " + heredoc:     true,
		"applypatch <<EOF\nx\nEOF": true, // intercepted, though the patch does not read
		"ls && " + heredoc:         false,
		"apply_patch 'x'":          false,
		"ls":                       false,
		"((":                       false,
	} {
		if got := Intercepted(cmd); got != want {
			t.Errorf("Intercepted(%q) = %v, want %v", cmd, got, want)
		}
	}
}
