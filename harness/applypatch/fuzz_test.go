package applypatch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParsePatch: the parser never panics, names no empty path, and a
// patch sent as Codex's intercepted heredoc reads exactly as the patch
// itself does.
func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ x\n-1\n+2\n\n@@\n 3\n*** End of File\n*** Delete File: c\n*** End Patch",
		"<<'EOF'\n*** Begin Patch\n*** Add File: h\n+x\n*** End Patch\nEOF",
		"*** Begin Patch\n*** Update File: f\n import foo\n+bar\n*** End Patch",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		text := string(b)
		ops, err := Parse(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
		}
		for _, op := range ops {
			if op.Path == "" || strings.ContainsRune(op.Path, 0) || strings.ContainsRune(op.MoveTo, 0) {
				t.Fatalf("op %+v", op)
			}
		}
		if strings.ContainsAny(text, "\r\x00") || !utf8.ValidString(text) || strings.Contains("\n"+text+"\n", "\nEOF\n") {
			return // not a heredoc body as is
		}
		shellOps, found, shellErr := InShell("apply_patch <<'EOF'\n" + text + "\nEOF\n")
		if !found {
			return // the shell parser refused it: the gate's analysis decides
		}
		if (err == nil) != (shellErr == nil) || (err == nil && !reflect.DeepEqual(ops, shellOps)) {
			t.Fatalf("as a patch: %+v, %v; in a heredoc: %+v, %v", ops, err, shellOps, shellErr)
		}
	})
}

// FuzzShellPatches: never panics; whatever it reads names real paths.
func FuzzShellPatches(f *testing.F) {
	for _, s := range []string{
		heredocPatch,
		"cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+1\n*** End Patch\nEOF\n",
		"bash -lc \"apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: y\n*** End Patch\nEOF\n\"",
		"echo hi; apply_patch <<EOF\n$X\nEOF",
		"cat p | apply_patch",
		"ls -la && make test",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		ops, found, err := InShell(cmd)
		if !found && (ops != nil || err != nil) {
			t.Fatalf("not found, yet %+v, %v", ops, err)
		}
		for _, op := range ops {
			if op.Path == "" {
				t.Fatalf("op %+v", op)
			}
		}
	})
}
