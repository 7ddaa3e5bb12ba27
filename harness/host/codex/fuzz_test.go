package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
