package gate

import (
	"reflect"
	"strings"
	"testing"
)

func TestAnalyzeShell(t *testing.T) {
	tests := []struct {
		cmd     string
		writes  bool
		targets []string
		unknown bool
	}{
		// Reads and plain executions.
		{cmd: "ls -la", writes: false},
		{cmd: "cat README.md | grep foo", writes: false},
		{cmd: "go test ./... 2>&1 | tail -20", writes: false},
		{cmd: "echo hi > /dev/null 2>&1", writes: false},
		{cmd: "grep -r 'a > b' src", writes: false},
		{cmd: `echo "x > y"`, writes: false},
		{cmd: "git status && git diff", writes: false},
		{cmd: "git reset HEAD~1", writes: false},
		{cmd: "git stash list", writes: false},
		{cmd: "python3 -m pytest -q", writes: false},
		{cmd: "python3 -c 'print(1+1)'", writes: false},
		{cmd: "sed -n 1,20p file.go", writes: false},
		{cmd: "sed 's/a/b/' in.txt", writes: false},
		{cmd: "curl -s https://example.com", writes: false},
		{cmd: "wget -qO- https://example.com", writes: false},
		{cmd: "tar tzf x.tgz", writes: false},
		{cmd: "find . -name '*.go' -print", writes: false},
		{cmd: "gofmt -l .", writes: false},
		{cmd: "black --check .", writes: false},
		{cmd: "make test", writes: false},
		{cmd: "./scripts/run-tests.sh", writes: false},
		{cmd: "cmd 2>&1 >&2", writes: false},
		{cmd: "# rm -rf /\nls", writes: false},
		{cmd: "x=$(( 1 + 2 )); echo $x", writes: false},

		// Redirections.
		{cmd: "echo hi > out.txt", writes: true, targets: []string{"out.txt"}},
		{cmd: "echo hi>>log.txt", writes: true, targets: []string{"log.txt"}},
		{cmd: "cmd &> all.log", writes: true, targets: []string{"all.log"}},
		{cmd: "cmd 2> err.log", writes: true, targets: []string{"err.log"}},
		{cmd: "cmd >| forced", writes: true, targets: []string{"forced"}},
		{cmd: "echo x > \"$OUT\"", writes: true, unknown: true},
		{cmd: "echo x > ~/f", writes: true, unknown: true},
		{cmd: "cat > src/a.go <<'EOF'\npackage a\nEOF", writes: true, targets: []string{"src/a.go"}},
		{cmd: "cat <<EOF > notes.md\n# rm -rf x\nEOF\necho done", writes: true, targets: []string{"notes.md"}},
		{cmd: "echo a | tee -a x.log y.log", writes: true, targets: []string{"x.log", "y.log"}},
		{cmd: "echo a | tee", writes: false},

		// File commands.
		{cmd: "rm -rf build/", writes: true, targets: []string{"build/"}},
		{cmd: "rm -- -weird", writes: true, targets: []string{"-weird"}},
		{cmd: "touch a b", writes: true, targets: []string{"a", "b"}},
		{cmd: "mkdir -p -m 755 out/dir", writes: true, targets: []string{"out/dir"}},
		{cmd: "cp -r src dst", writes: true, targets: []string{"dst"}},
		{cmd: "cp -t dir a b", writes: true, targets: []string{"dir"}},
		{cmd: "mv old new", writes: true, targets: []string{"old", "new"}},
		{cmd: "ln -s target name", writes: true, targets: []string{"name"}},
		{cmd: "dd if=/dev/zero of=disk.img bs=1M count=1", writes: true, targets: []string{"disk.img"}},
		{cmd: "truncate -s 0 f.log", writes: true, targets: []string{"f.log"}},
		{cmd: "sed -i 's/a/b/' main.go", writes: true, targets: []string{"main.go"}},
		{cmd: "sed -i.bak -e 's/a/b/' x.go y.go", writes: true, targets: []string{"x.go", "y.go"}},
		{cmd: "sed --in-place=.orig 's/a/b/' z.go", writes: true, targets: []string{"z.go"}},
		{cmd: "sed -Ei 's/a/b/' w.go", writes: true, targets: []string{"w.go"}},
		{cmd: "perl -pi -e 's/a/b/' f.txt", writes: true, unknown: true},
		{cmd: "rm *.tmp", writes: true, unknown: true},
		{cmd: "rm $(cat list)", writes: true, unknown: true},
		{cmd: "gofmt -w main.go", writes: true, targets: []string{"main.go"}},
		{cmd: "prettier --write src", writes: true, targets: []string{"src"}},
		{cmd: "npm install", writes: true, unknown: true},
		{cmd: "go mod tidy", writes: true, unknown: true},
		{cmd: "git checkout -- file.go", writes: true, unknown: true},
		{cmd: "git rm old.go", writes: true, targets: []string{"old.go"}},
		{cmd: "git reset --hard", writes: true, unknown: true},
		{cmd: "curl -o page.html https://example.com", writes: true, targets: []string{"page.html"}},
		{cmd: "curl -sLo page.html https://example.com", writes: true, targets: []string{"page.html"}},
		{cmd: "curl -O https://example.com/x.tgz", writes: true, unknown: true},
		{cmd: "wget https://example.com/x.tgz", writes: true, unknown: true},
		{cmd: "tar xzf x.tgz", writes: true, unknown: true},
		{cmd: "tar czf out.tgz src", writes: true, targets: []string{"out.tgz"}},
		{cmd: "unzip a.zip", writes: true, unknown: true},
		{cmd: "find . -name '*.o' -delete", writes: true, unknown: true},
		{cmd: "find . -name '*.o' -exec rm {} \\;", writes: true, unknown: true},
		{cmd: "ls | xargs rm", writes: true, unknown: true},
		{cmd: "awk '{print $1 > \"out\"}' in", writes: true, unknown: true},

		// Wrappers, nesting, interpreters.
		{cmd: "sudo -u bob rm x", writes: true, targets: []string{"x"}},
		{cmd: "env A=1 B=2 touch y", writes: true, targets: []string{"y"}},
		{cmd: "FOO=bar rm z", writes: true, targets: []string{"z"}},
		{cmd: "timeout 10 rm q", writes: true, targets: []string{"q"}},
		{cmd: "bash -c 'echo hi > f'", writes: true, targets: []string{"f"}},
		{cmd: "sh -c \"rm -f g\"", writes: true, targets: []string{"g"}},
		{cmd: "bash -c 'ls'", writes: false},
		{cmd: "eval 'rm e'", writes: true, targets: []string{"e"}},
		{cmd: "echo $(rm -f sub)", writes: true, targets: []string{"sub"}},
		{cmd: "echo `touch bq`", writes: true, targets: []string{"bq"}},
		{cmd: "diff <(sort a) <(sort b)", writes: false},
		{cmd: "cmd | tee >(gzip > out.gz)", writes: true, targets: []string{"out.gz"}},
		{cmd: "gzip -k big.log", writes: true, unknown: true},
		{cmd: "bash <<'EOF'\nrm -f hd\nEOF", writes: true, targets: []string{"hd"}},
		{cmd: "python3 - <<'EOF'\nopen('x','w').write('y')\nEOF", writes: true, unknown: true},
		{cmd: "python3 <<'EOF'\nprint(1)\nEOF", writes: false},
		{cmd: "python3 -c \"open('f','w').write('x')\"", writes: true, unknown: true},
		{cmd: "node -e \"require('fs').writeFileSync('a','b')\"", writes: true, unknown: true},
		{cmd: "$EDITOR file", writes: true, unknown: true},
		{cmd: "for f in a b; do rm $f; done", writes: true, unknown: true},
		{cmd: "if true; then touch ok; fi", writes: true, targets: []string{"ok"}},
		{cmd: "{ echo a; echo b; } > both", writes: true, targets: []string{"both"}},
		{cmd: "echo {a,b}.txt > x{1,2}", writes: true, unknown: true},

		// Commands the hand-written lexer this parser replaced did not see.
		{cmd: "cat <<EOF > notes.md\n$(rm -f inhd)\nEOF", writes: true, targets: []string{"notes.md", "inhd"}},
		{cmd: "cat <<EOF\n`touch bqhd`\nEOF", writes: true, targets: []string{"bqhd"}},
		{cmd: "cat <<'EOF'\n$(rm -f quoted)\nEOF", writes: false},
		{cmd: "echo ${x:-$(rm -f dflt)}", writes: true, targets: []string{"dflt"}},
		{cmd: "echo $(( $(rm -f arith) + 1 ))", writes: true, targets: []string{"arith"}},
		{cmd: "coproc rm -f co", writes: true, targets: []string{"co"}},
		{cmd: "case $x in a) rm -f c1;; *) touch c2;; esac", writes: true, targets: []string{"c1", "c2"}},
		{cmd: "[[ -f x ]] && rm -f y", writes: true, targets: []string{"y"}},
		{cmd: `echo a\>b c\ d`, writes: false},
		{cmd: `echo "a\"b" > "out\"q"`, writes: true, targets: []string{`out"q`}},

		// Unparseable: conservative.
		{cmd: "echo 'unterminated", writes: true, unknown: true},
		{cmd: "echo \"open", writes: true, unknown: true},
		{cmd: "echo $(ls", writes: true, unknown: true},
		{cmd: "cat >", writes: true, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			e := AnalyzeShell(tt.cmd)
			if e.Writes != tt.writes {
				t.Fatalf("Writes = %v, want %v (reasons %v)", e.Writes, tt.writes, e.Reasons)
			}
			if e.Unknown != tt.unknown {
				t.Errorf("Unknown = %v, want %v (reasons %v, targets %v)", e.Unknown, tt.unknown, e.Reasons, e.Targets)
			}
			if tt.targets != nil && !reflect.DeepEqual(e.Targets, tt.targets) {
				t.Errorf("Targets = %q, want %q", e.Targets, tt.targets)
			}
			if e.Writes && (len(e.Classes) == 0 || len(e.Reasons) == 0) {
				t.Errorf("a write without classes or reasons: %+v", e)
			}
			for _, c := range e.Classes {
				if !IsFileWriteClass(c) {
					t.Errorf("class %q is not a file write class", c)
				}
			}
		})
	}
}

func FuzzAnalyzeShell(f *testing.F) {
	for _, s := range []string{
		"echo hi > out", "cat <<EOF\nx\nEOF", "a | b && c || d; e &", "$(a $(b `c`))",
		"sed -i s/a/b/ f", "bash -c 'bash -c \"rm x\"'", "x=1 y=$((2)) z", "'", "\"", "<<", "2>&1 >",
		"find . -exec rm {} +", "tar -cf - .", "cmd <(a) >(b)", "{a,b}", "\\\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		e := AnalyzeShell(cmd)
		if !e.Writes && (e.Unknown || len(e.Targets) > 0 || len(e.Classes) > 0) {
			t.Fatalf("no writes but details: %+v", e)
		}
		if e.Writes && len(e.Targets) == 0 && !e.Unknown {
			t.Fatalf("writes with no target and not unknown: %+v", e)
		}
		// Running something after a writing command keeps it writing.
		if e.Writes && !AnalyzeShell(cmd+" ; ls").Writes {
			t.Fatalf("%q writes but %q does not", cmd, cmd+" ; ls")
		}
		// A redirection to a literal file is always a write.
		if !strings.ContainsAny(cmd, "'\"\\`$<>#\n") {
			if !AnalyzeShell(cmd + " > fuzz-out").Writes {
				t.Fatalf("redirection after %q not seen", cmd)
			}
		}
	})
}

// BenchmarkAnalyzeShell is the gate's cost for one Bash command of the
// kinds agents run (a PreToolUse hook analyses one).
func BenchmarkAnalyzeShell(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{
		{"pipeline", "go test ./... 2>&1 | tail -20"},
		{"heredoc", "cat > src/a.go <<'EOF'\npackage a\n\nfunc A() int { return 1 }\nEOF"},
		{"list", "git status && git diff --stat; git log --oneline -5"},
		{"find-exec", "find . -name '*.o' -exec rm {} \\;"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AnalyzeShell(c.cmd)
			}
		})
	}
}
