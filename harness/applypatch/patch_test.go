package applypatch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func add(p string) FileOp      { return FileOp{Kind: OpAdd, Path: p} }
func upd(p string) FileOp      { return FileOp{Kind: OpUpdate, Path: p} }
func del(p string) FileOp      { return FileOp{Kind: OpDelete, Path: p} }
func move(p, to string) FileOp { return FileOp{Kind: OpUpdate, Path: p, MoveTo: to} }
func ops(o ...FileOp) []FileOp { return o }

// The patches Codex 0.169.0 sent to hooks in the exploration runs
// (docs/codex-notes.md §7), and the forms of Codex's own parser tests.
func TestParsePatch(t *testing.T) {
	for _, c := range []struct {
		name, patch string
		want        []FileOp
	}{
		{"real add", "*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n", ops(add("a.txt"))},
		{"real update and add", "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** Add File: sub/c.txt\n+c\n*** End Patch\n",
			ops(upd("a.txt"), add("sub/c.txt"))},
		{"real delete", "*** Begin Patch\n*** Delete File: sub/c.txt\n*** End Patch\n", ops(del("sub/c.txt"))},
		{"every kind", "*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: path/delete.py\n*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n+    return 123\n*** End Patch",
			ops(add("path/add.py"), del("path/delete.py"), move("path/update.py", "path/update2.py"))},
		{"empty patch", "*** Begin Patch\n*** End Patch", nil},
		{"empty added file", "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch", ops(add("empty.txt"))},
		{"first chunk without @@", "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch", ops(upd("file2.py"))},
		{"several chunks, blank lines between", "*** Begin Patch\n*** Update File: m.go\n@@ func a()\n-x\n+y\n\n@@ func b()\n context\n-p\n+q\n*** End of File\n*** Delete File: old.go\n*** End Patch",
			ops(upd("m.go"), del("old.go"))},
		{"empty line inside a chunk", "*** Begin Patch\n*** Update File: f\n@@ ctx\n\n context\n-remove\n+add\n*** End Patch", ops(upd("f"))},
		{"padded markers", "  *** Begin Patch  \n   *** Add File: foo\n+hi\n *** End Patch ", ops(add("foo"))},
		{"surrounding whitespace", "\n\n*** Begin Patch\n*** Add File: x\n+1\n*** End Patch\n\n\n", ops(add("x"))},
		{"CRLF lines", "*** Begin Patch\r\n*** Add File: w.txt\r\n+win\r\n*** End Patch\r\n", ops(add("w.txt"))},
		{"heredoc lines kept by the model", "<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+x\n*** End Patch\nEOF\n", ops(add("h.txt"))},
		{"unquoted heredoc lines", "<<EOF\n*** Begin Patch\n*** Delete File: h.txt\n*** End Patch\nEOF", ops(del("h.txt"))},
		{"absolute paths", "*** Begin Patch\n*** Add File: /tmp/abs.txt\n+x\n*** Update File: /etc/hosts\n@@\n+1.2.3.4 x\n*** End Patch", ops(add("/tmp/abs.txt"), upd("/etc/hosts"))},
		{"path with spaces", "*** Begin Patch\n*** Add File: my notes/a b.md\n+x\n*** End Patch", ops(add("my notes/a b.md"))},
		{"dot-dot path kept as written", "*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch", ops(add("../outside.txt"))},
		{"added line that looks like a marker", "*** Begin Patch\n*** Add File: doc.md\n+*** Add File: not-a-file\n+ok\n*** End Patch", ops(add("doc.md"))},
		{"unicode", "*** Begin Patch\n*** Update File: ünï.txt\n@@\n-a\n+😀\n*** End Patch", ops(upd("ünï.txt"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.patch)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ops\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParsePatchErrors(t *testing.T) {
	for _, c := range []struct{ name, patch, want string }{
		{"empty", "", "first line"},
		{"not a patch", "echo hi", "first line"},
		{"no end", "*** Begin Patch\n*** Add File: a\n+x", "last line"},
		{"begin only", "*** Begin Patch", "last line"},
		{"bad hunk header", "*** Begin Patch\nbad\n*** End Patch", "line 2: \"bad\" is not a hunk header"},
		{"empty update", "*** Begin Patch\n*** Update File: test.py\n*** End Patch", "has no changes"},
		{"update with a bare @@", "*** Begin Patch\n*** Update File: f\n@@\n*** End Patch", "holds no lines"},
		{"chunk of junk", "*** Begin Patch\n*** Update File: f\n@@\nbad\n*** End Patch", "unexpected line \"bad\""},
		{"second chunk without @@", "*** Begin Patch\n*** Update File: f\n@@\n-a\n\nbad\n*** End Patch", "expected a chunk to start with '@@'"},
		{"end of file first", "*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch", "holds no lines"},
		{"header without path", "*** Begin Patch\n*** Add File: \n+x\n*** End Patch", "is not a hunk header"},
		{"move without path", "*** Begin Patch\n*** Update File: a\n*** Move to: \n@@\n+x\n*** End Patch", "names no path"},
		{"NUL in a path", "*** Begin Patch\n*** Delete File: a\x00b\n*** End Patch", "NUL"},
		{"mismatched heredoc quotes", "<<\"EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n", "first line"},
		{"heredoc without end marker", "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n", "last line"},
		{"text after end", "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n*** Add File: b\n+y", "last line"},
		{"end marker inside", "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n*** Delete File: b\n*** End Patch", "is not a hunk header"},
		{"lower-case marker", "*** begin patch\n*** End Patch", "first line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.patch)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %+v, %v; want a ParseError", got, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func TestEffectsAndTouched(t *testing.T) {
	got := ops(add("a"), upd("b"), del("c"), move("d", "e"), upd("a"))
	var effects []Effect
	for _, op := range got {
		effects = append(effects, op.Effects()...)
	}
	want := []Effect{{"a", ActionWrite}, {"b", ActionEdit}, {"c", ActionRemove}, {"d", ActionRemove}, {"e", ActionWrite}, {"a", ActionEdit}}
	if !reflect.DeepEqual(effects, want) {
		t.Errorf("effects\n got %v\nwant %v", effects, want)
	}
	if tt, want := Touched(got), []string{"a", "b", "e"}; !reflect.DeepEqual(tt, want) {
		t.Errorf("Touched = %v, want %v", tt, want)
	}
}

func TestParsePatchSizeLimit(t *testing.T) {
	big := "*** Begin Patch\n*** Add File: big\n" + strings.Repeat("+x\n", maxPatchLines) + "*** End Patch"
	if _, err := Parse(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a patch over %d lines: %v", maxPatchLines, err)
	}
}

func BenchmarkParsePatch(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("*** Begin Patch\n")
	for i := 0; i < 50; i++ {
		sb.WriteString("*** Update File: src/file.go\n@@ func f()\n context\n-old\n+new\n context\n")
	}
	sb.WriteString("*** End Patch\n")
	p := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(p); err != nil {
			b.Fatal(err)
		}
	}
}
