package shellread

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const cwd = "/p"

func TestReads(t *testing.T) {
	m := "/p/.nexus/memory/"
	for _, c := range []struct {
		cmd  string
		want []string // nil with ok=false means uncertain
		ok   bool
	}{
		// the viewers
		{"cat .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"cat -n .nexus/memory/a.md .nexus/memory/b.md", []string{m + "a.md", m + "b.md"}, true},
		{"cat .nexus/memory/a.md .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"/bin/cat /p/.nexus/memory/a.md", []string{m + "a.md"}, true},
		{`\cat .nexus/memory/a.md`, []string{m + "a.md"}, true},
		{"cat -- -weird.md", []string{"/p/-weird.md"}, true},
		{"cat - ", nil, true},
		{"head -n 20 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"head -n20 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"head -5 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"head --lines=5 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"head --lines 5 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"head -n -5 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"tail -f -n 3 .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"less -R .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"less .nexus/memory/a.md .nexus/memory/b.md", nil, false},
		{"sed -n '1,40p' .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"sed -n -e '/x/p' -e '5p' .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"sed --quiet 1p .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"sed -ne 1p .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"sed 's/a/b/' .nexus/memory/a.md", nil, true},        // not the -n idiom
		{"sed -i 's/a/b/' .nexus/memory/a.md", nil, true},     // a write
		{"sed -n -i 1p .nexus/memory/a.md", nil, true},        // a write
		{"sed -i.bak 's/a/b/' .nexus/memory/a.md", nil, true}, // a write
		{"sed -n -f script.sed .nexus/memory/a.md", nil, false},
		{"sed -n", nil, false},
		{"grep -n lock .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"grep -e lock -i .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"grep -A 3 'two words' .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"egrep 'x|y' .nexus/memory/a.md", []string{m + "a.md"}, true},
		{"grep lock .nexus/memory/a.md .nexus/memory/b.md", nil, true}, // a scan of several files
		{"grep -r lock .nexus/memory", nil, true},
		{"grep -l lock .nexus/memory/a.md", nil, true},
		{"grep -c lock .nexus/memory/a.md", nil, true},
		{"grep -q lock .nexus/memory/a.md", nil, true},
		{"grep --count lock .nexus/memory/a.md", nil, true},
		{"grep -f pats .nexus/memory/a.md", nil, false},
		{"grep lock", nil, true},
		{"cat -Z .nexus/memory/a.md", nil, false}, // unknown option
		// lists, pipes, redirections
		{"cat .nexus/memory/a.md | head -5", []string{m + "a.md"}, true},
		{"cat .nexus/memory/a.md && tail .nexus/memory/b.md; head .nexus/memory/c.md || true", []string{m + "a.md", m + "b.md", m + "c.md"}, true},
		{"cat .nexus/memory/a.md\nhead .nexus/memory/b.md", []string{m + "a.md", m + "b.md"}, true},
		{"cat .nexus/memory/a.md 2>/dev/null", []string{m + "a.md"}, true},
		{"cat .nexus/memory/a.md 2>&1 | less", []string{m + "a.md"}, true},
		{"cat .nexus/memory/a.md > /tmp/copy", []string{m + "a.md"}, true},
		{"cat /tmp/x > .nexus/memory/a.md", []string{"/tmp/x"}, true},      // the memory file is written
		{"cat /tmp/x >> .nexus/memory/a.md", []string{"/tmp/x"}, true},     // appended to
		{"cat /tmp/x &> .nexus/memory/a.md", []string{"/tmp/x"}, true},     // both streams
		{"LC_ALL=C grep x .nexus/memory/a.md", []string{m + "a.md"}, true}, // assignment prefix
		{"cat '.nexus/memory/with space.md'", []string{m + "with space.md"}, true},
		{`cat ".nexus/memory/q\"uote.md"`, []string{m + `q"uote.md`}, true},
		{"cat .nexus/memory/a.md # and a comment", []string{m + "a.md"}, true},
		{"cat .nexus/memory/a.md \\\n .nexus/memory/b.md", []string{m + "a.md", m + "b.md"}, true},
		// working directory
		{"cd .nexus/memory && cat a.md", []string{m + "a.md"}, true},
		{"cd /p/.nexus && cd memory && cat a.md | head", []string{m + "a.md"}, true},
		{"cd .nexus/memory; cat a.md", nil, false},
		{"cd .nexus/memory && cat a.md; cat b.md", nil, false},
		{"cd .nexus/memory && cat a.md; cat /p/.nexus/memory/b.md", []string{m + "a.md", m + "b.md"}, true},
		{"false || cd .nexus/memory && cat a.md", nil, false},
		{"cd - && cat a.md", nil, false},
		{"cd && cat a.md", nil, false},
		{"pushd .nexus && cat memory/a.md", nil, false},
		// not reads
		{"echo .nexus/memory/a.md", nil, true},
		{"ls .nexus/memory", nil, true},
		{"find .nexus/memory -name '*.md'", nil, true},
		{"cp .nexus/memory/a.md /tmp/", nil, true},
		{"python3 read.py .nexus/memory/a.md", nil, true},
		{"VAR=1", nil, true},
		{"", nil, true},
		// uncertain: nothing is recorded
		{"cat $F", nil, false},
		{`cat "$HOME/.nexus/memory/a.md"`, nil, false},
		{"cat $(ls .nexus/memory/*.md)", nil, false},
		{"cat `echo a.md`", nil, false},
		{"cat .nexus/memory/*.md", nil, false},
		{"cat .nexus/memory/a?.md", nil, false},
		{"cat .nexus/memory/{a,b}.md", nil, false},
		{"cat ~/.nexus/memory/a.md", nil, false},
		{"(cat .nexus/memory/a.md)", nil, false},
		{"cat < .nexus/memory/a.md", nil, false},
		{"cat <<EOF\nhi\nEOF", nil, false},
		{"cat .nexus/memory/a.md &", nil, false},
		{"cat .nexus/memory/a.md &&", nil, false},
		{"&& cat .nexus/memory/a.md", nil, false},
		{"cat 'unterminated", nil, false},
		{"if true; then cat .nexus/memory/a.md; fi", nil, false},
		{"for f in a; do cat $f; done", nil, false},
		{"cat .nexus/memory/a.md >", nil, false},
		{"! cat .nexus/memory/a.md", nil, false},
	} {
		got, ok := Reads(c.cmd, cwd)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Reads(%q) = %q, %v; want %q, %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
}

func TestReadsWithoutCwd(t *testing.T) {
	if got, ok := Reads("cat a.md", ""); ok || got != nil {
		t.Fatalf("relative name without a cwd: %q, %v", got, ok)
	}
	if got, ok := Reads("cat /abs/a.md", ""); !ok || len(got) != 1 {
		t.Fatalf("absolute name without a cwd: %q, %v", got, ok)
	}
}

func FuzzReads(f *testing.F) {
	for _, s := range []string{
		"cat .nexus/memory/a.md", "cd x && sed -n 1p a | grep -e y b", "head -n5 'a b' 2>&1",
		`grep "x\"y" f`, "cat a\\\nb", "a=1 b=2 tail -f -- f", "sed -i.bak s/a/b/ f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		files, ok := Reads(cmd, cwd)
		if !ok && files != nil {
			t.Fatalf("uncertain but files %q", files)
		}
		seen := map[string]bool{}
		for _, p := range files {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				t.Fatalf("%q: path %q is not clean and absolute", cmd, p)
			}
			if seen[p] {
				t.Fatalf("%q: %q reported twice", cmd, p)
			}
			seen[p] = true
		}
		// Anything the parser reports must come from a viewer named in
		// the text; expansions, substitutions and redirections from
		// files never yield a read.
		if len(files) > 0 && !strings.ContainsAny(cmd, "ceghlst") {
			t.Fatalf("%q: reads %q without naming a viewer", cmd, files)
		}
		if ok && len(files) > 0 && strings.ContainsAny(cmd, "$`*?<") {
			// Allowed only quoted, escaped or in a comment.
			if !strings.ContainsAny(cmd, "'\"\\#") {
				t.Fatalf("%q: an expansion character outside quotes still produced reads %q", cmd, files)
			}
		}
		again, ok2 := Reads(cmd, cwd)
		if ok2 != ok || !reflect.DeepEqual(again, files) {
			t.Fatalf("%q: not deterministic", cmd)
		}
	})
}
