package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testNexus = "/opt/nexus/bin/nexus"

// TestEditHooksGolden installs into and uninstalls from hooks.json files a
// user may have (none, the user's own groups, an older nexus install), and
// checks what the user already had keeps its keys and hashes, a second
// install changes nothing and nexus's handlers are the ones it lists.
func TestEditHooksGolden(t *testing.T) {
	const path = "/home/u/.codex/hooks.json"
	for _, name := range []string{"empty", "empty-object", "user-hooks", "old-nexus"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "hooks", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			inst, err := EditHooks(in, testNexus, "", true)
			if err != nil {
				t.Fatal(err)
			}
			if !inst.Changed || inst.Remove {
				t.Fatalf("install: %+v", inst)
			}
			golden(t, filepath.Join("hooks", name+".install.golden"), inst.Data)

			again, err := EditHooks(inst.Data, testNexus, "", true)
			if err != nil || again.Changed || string(again.Data) != string(inst.Data) {
				t.Errorf("a second install changed the file (%v): %+v", err, again)
			}

			// The user's handlers keep their keys and hashes (their trust).
			userBefore, _ := ListHooks(path, in)
			after, err := ListHooks(path, inst.Data)
			if err != nil {
				t.Fatal(err)
			}
			afterByKey := map[string]HookEntry{}
			for _, e := range after {
				afterByKey[e.Key] = e
			}
			for _, e := range userBefore {
				if e.Nexus {
					continue
				}
				if a, ok := afterByKey[e.Key]; !ok || a.Hash != e.Hash || a.Nexus {
					t.Errorf("the user's hook %s changed: before %+v, after %+v", e.Key, e, a)
				}
			}

			// nexus's handlers: one per installed event, in a group without
			// a matcher, with the timeout it registers.
			ours, err := NexusHooks(path, inst.Data)
			if err != nil {
				t.Fatal(err)
			}
			if len(ours) != len(InstalledHooks) {
				t.Fatalf("NexusHooks lists %d handlers, want %d: %+v", len(ours), len(InstalledHooks), ours)
			}
			for _, e := range ours {
				cmd, _ := HookCommand(testNexus, "", e.Hook.Event)
				if e.Hook.Command != cmd || e.Hook.Matcher != nil || e.Hash != TrustHash(e.Hook) || !strings.HasPrefix(e.Key, path+":"+EventKey(e.Hook.Event)+":") {
					t.Errorf("nexus's %s handler: %+v", e.Hook.Event, e)
				}
				if e.Hook.Event == SessionEnd && EffectiveTimeout(SessionEnd, e.Hook.Timeout) != MaxShortTimeout {
					t.Errorf("SessionEnd timeout %d, want Codex's cap %d", e.Hook.Timeout, MaxShortTimeout)
				}
			}

			un, err := EditHooks(inst.Data, testNexus, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if un.Remove {
				golden(t, filepath.Join("hooks", name+".uninstall.golden"), []byte("(file removed)\n"))
			} else {
				golden(t, filepath.Join("hooks", name+".uninstall.golden"), un.Data)
			}
			if left, _ := NexusHooks(path, un.Data); len(left) > 0 {
				t.Errorf("uninstall left nexus's handlers: %+v", left)
			}
		})
	}
}

// TestEditHooksKeepsUserFileOnUninstall: uninstalling from a file that
// holds only the user's hooks changes nothing.
func TestEditHooksNothingToRemove(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "hooks", "user-hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{in, nil, []byte(`{"other": 1}`)} {
		un, err := EditHooks(data, testNexus, "", false)
		if err != nil || un.Changed || un.Remove || string(un.Data) != string(data) {
			t.Errorf("uninstall from %q: %+v, %v", data, un, err)
		}
	}
}

func TestEditHooksRefuses(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"not JSON", "{hooks", "not valid JSON"},
		{"not an object", "[]", "not a JSON object"},
		{"hooks not an object", `{"hooks": []}`, `"hooks" is not an object`},
		{"event not an array", `{"hooks": {"Stop": {}}}`, `"hooks"."Stop" is not an array`},
		{"group not an object", `{"hooks": {"Stop": [1]}}`, `"hooks"."Stop"[0] is not an object`},
		{"group without handlers", `{"hooks": {"Stop": [{"matcher": "x"}]}}`, `has no "hooks" array`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, install := range []bool{true, false} {
				_, err := EditHooks([]byte(c.data), testNexus, "", install)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("install=%v: %v, want an error saying %q", install, err, c.want)
				}
			}
		})
	}
	if _, err := EditHooks(nil, "", "", true); err == nil {
		t.Error("install without an executable succeeded")
	}
}

func TestHookCommand(t *testing.T) {
	for _, c := range []struct{ nexus, core, want string }{
		{"/usr/local/bin/nexus", "", "/usr/local/bin/nexus hook --host codex --managed PreToolUse"},
		{"/home/me/my tools/nexus", "/data/core 0.10", "'/home/me/my tools/nexus' hook --host codex --managed --core '/data/core 0.10' PreToolUse"},
		{"/x/it's/nexus", "", `"/x/it's/nexus" hook --host codex --managed PreToolUse`},
	} {
		got, err := HookCommand(c.nexus, c.core, PreToolUse)
		if err != nil || got != c.want {
			t.Errorf("HookCommand(%q, %q) = %q, %v; want %q", c.nexus, c.core, got, err, c.want)
		}
		if !IsNexusHook(got) {
			t.Errorf("IsNexusHook(%q) = false", got)
		}
	}
	if IsNexusHook("nexus hook --host codex") || IsNexusHook("nexus hook --host claude --managed PreToolUse") {
		t.Error("IsNexusHook accepts a command nexus install did not write")
	}
}

// TestEditHooksMovedHandler: a nexus handler the user moved into a group
// with a narrowing matcher is replaced by one that sees every call (the
// gate must see apply_patch too).
func TestEditHooksMovedHandler(t *testing.T) {
	cmd, _ := HookCommand(testNexus, "", PreToolUse)
	in := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + cmd + `", "timeout": 30}]}]}}`
	inst, err := EditHooks([]byte(in), testNexus, "", true)
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := NexusHooks("/h", inst.Data)
	for _, e := range ours {
		if e.Hook.Event == PreToolUse && (e.Hook.Matcher != nil || e.Group != 0) {
			t.Errorf("nexus's PreToolUse handler: %+v", e)
		}
	}
}

// TestListHooksMatchesCodex reads a hooks.json written to give the
// handlers of the hash probe (Interrupt's timeout above the cap, a matcher
// on an event that drops it, two handlers in one group) and checks every
// key and hash against Codex's answer for them.
func TestListHooksMatchesCodex(t *testing.T) {
	const path = "/work/wt/codex-explore/.e2e/scratch/hashprobe/home/hooks.json" // where the probe ran
	data, err := os.ReadFile(filepath.Join("testdata", "trust", "hashprobe-hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ListHooks(path, data)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]string{}
	for _, e := range got {
		byKey[e.Key] = e.Hash
	}
	n := 0
	for _, h := range readListed(t, "hashprobe-hooks-list.json") {
		if !strings.HasPrefix(h.Key, path+":") {
			continue // the probe's [hooks] in config.toml
		}
		n++
		if byKey[h.Key] != h.CurrentHash {
			t.Errorf("%s: ListHooks %q, Codex %s", h.Key, byKey[h.Key], h.CurrentHash)
		}
	}
	if n != len(got) {
		t.Errorf("ListHooks found %d handlers, Codex listed %d", len(got), n)
	}
}
