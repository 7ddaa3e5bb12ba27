package codex

import (
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
