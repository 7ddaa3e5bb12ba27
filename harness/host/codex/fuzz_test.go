package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// seedFiles adds the files matching a pattern under testdata as seeds.
func seedFiles(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

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
		ops, err := ParsePatch(text)
		if err != nil {
			var pe *PatchError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a PatchError", err)
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
		shellOps, found, shellErr := ShellPatches("apply_patch <<'EOF'\n" + text + "\nEOF\n")
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
		ops, found, err := ShellPatches(cmd)
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

// FuzzDecode: any payload decodes or fails with an InputError, never a
// panic; an event that decodes encodes any reply.
func FuzzDecode(f *testing.F) {
	seedFiles(f, "payloads/*.json")
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, ev, err := Decode(data, "")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an InputError", err)
			}
			_ = PeekEvent(data)
			return
		}
		if _, ok := lifecycle.CanonicalName(ev.Name); !ok {
			t.Fatalf("%s decoded to unknown event %q", name, ev.Name)
		}
		for _, r := range []lifecycle.Reply{{Context: ev.Prompt, Notice: ev.Tool}, {Decision: "deny", Reason: ev.Prompt}} {
			if _, err := Encode(name, r); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzEditConfig: on any config.toml the edit either refuses (nothing
// changed) or gives a file that parses, that a second install leaves
// alone, and whose uninstall gives the user's file back byte for byte
// (give or take a final newline) when it held nothing of nexus's.
func FuzzEditConfig(f *testing.F) {
	seedFiles(f, "config/*.toml")
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := decodeTOML(src); err != nil {
			if res, err := EditConfig(src, installEdit); err == nil || res.Changed {
				t.Fatalf("an invalid file was edited: %v", err)
			}
			return
		}
		inst, err := EditConfig(src, installEdit)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || inst.Changed || !bytes.Equal(inst.Data, src) {
				t.Fatalf("failed edit: %v, changed %v", err, inst.Changed)
			}
			return
		}
		if _, err := decodeTOML(inst.Data); err != nil {
			t.Fatalf("the install does not parse: %v\n%s", err, inst.Data)
		}
		again, err := EditConfig(inst.Data, installEdit)
		if err != nil || again.Changed {
			t.Fatalf("a second install: %v\n%s\n-->\n%s", err, inst.Data, again.Data)
		}
		un, err := EditConfig(inst.Data, uninstallEdit)
		if err != nil {
			t.Fatalf("uninstall: %v\n%s", err, inst.Data)
		}
		if !hasNexus(t, src) && !sameModuloFinalNewline(un.Data, src) {
			t.Fatalf("uninstall did not give the file back:\n got %q\nwant %q", un.Data, src)
		}
	})
}

// FuzzEditHooks: on any hooks.json an install either refuses or leaves
// exactly nexus's handlers, once each, and is stable; an uninstall then
// leaves none.
func FuzzEditHooks(f *testing.F) {
	seedFiles(f, "hooks/*.json")
	seedFiles(f, "trust/hashprobe-hooks.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := EditHooks(data, testNexus, "", true)
		if err != nil {
			return
		}
		ours, err := NexusHooks("/h/hooks.json", inst.Data)
		if err != nil {
			// The user's own handlers may be malformed for ListHooks
			// (a timeout that is not a number): Codex refuses that file
			// too. nexus's edit itself must not be the cause.
			if _, err0 := ListHooks("/h/hooks.json", data); err0 == nil {
				t.Fatalf("the install broke the file: %v\n%s", err, inst.Data)
			}
			return
		}
		if len(ours) != len(InstalledHooks) {
			t.Fatalf("%d nexus handlers after install:\n%s", len(ours), inst.Data)
		}
		again, err := EditHooks(inst.Data, testNexus, "", true)
		if err != nil || again.Changed {
			t.Fatalf("a second install: %v", err)
		}
		un, err := EditHooks(inst.Data, testNexus, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if !un.Remove {
			if left, _ := NexusHooks("/h/hooks.json", un.Data); len(left) > 0 {
				t.Fatalf("uninstall left %+v", left)
			}
		}
	})
}
