package setup

import (
	"github.com/nexus-harness/nexus/harness/host/claude"
	"path/filepath"
	"strings"
	"testing"
)

func TestHookExecutable(t *testing.T) {
	for _, exe := range []string{
		"/usr/local/bin/nexus",
		"/opt/nexus bin/nexus",
		"/tmp/it's/nexus",
		"/a/'b'/c",
		"relative/nexus",
	} {
		for _, ev := range []string{claude.PreToolUse, claude.SessionEnd} {
			if got := HookExecutable(HookCommand(exe, "", ev)); got != exe {
				t.Errorf("HookExecutable(HookCommand(%q)) = %q", exe, got)
			}
		}
	}
	if got := HookExecutable("  nexus hook"); got != "nexus" {
		t.Errorf("leading blanks: %q", got)
	}
	if got := HookExecutable("'unterminated"); got != "unterminated" {
		t.Errorf("unterminated quote: %q", got)
	}
}

// Inspect reports exactly what Install wrote, leaves foreign entries out,
// and sees a partial install and an MCP server of another tool.
func TestInspectAfterInstall(t *testing.T) {
	proj := t.TempDir()
	settings := filepath.Join(proj, ".claude", "settings.json")
	writeFile(t, settings, userSettings)
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus bin/nexus"}

	r, err := Inspect(o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Installed() || len(r.Hooks) != 0 || r.MCP != nil {
		t.Fatalf("before install: %+v", r)
	}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	r, err = Inspect(o)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Installed() || len(r.Hooks) != len(InstalledEvents) {
		t.Fatalf("after install: %+v", r)
	}
	for _, ie := range InstalledEvents {
		if cmds := r.Hooks[ie.Event]; len(cmds) != 1 || cmds[0] != HookCommand(o.Command, "", ie.Event) {
			t.Errorf("%s: %q", ie.Event, cmds)
		}
	}
	if r.MCP == nil || !r.MCP.Ours || r.MCP.Command != o.Command || len(r.MCP.Args) != 1 || r.MCP.Args[0] != "mcp" {
		t.Errorf("mcp %+v", r.MCP)
	}
	if r.Nauro != nil {
		t.Errorf("nauro without Nauro: %+v", r.Nauro)
	}
	// With the decision store on its own entry, both are found.
	o.Nauro = true
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if r, err = Inspect(o); err != nil {
		t.Fatal(err)
	}
	if r.Nauro == nil || !r.Nauro.Ours || r.Nauro.Command != o.Command || strings.Join(r.Nauro.Args, " ") != "mcp --only decisions" ||
		strings.Join(r.MCP.Args, " ") != "mcp --without decisions" {
		t.Errorf("nauro %+v, mcp %+v", r.Nauro, r.MCP)
	}

	// Another tool's server named nexus, and a settings file that is not JSON.
	writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers":{"nexus":{"command":"node","args":["srv.js"]}}}`)
	writeFile(t, settings, `{"hooks": [`)
	r, err = Inspect(o)
	if err != nil {
		t.Fatal(err)
	}
	if r.MCP == nil || r.MCP.Ours || r.MCP.Command != "node" || len(r.Unreadable) != 1 || len(r.Hooks) != 0 || r.Installed() {
		t.Errorf("foreign server / unreadable settings: %+v %+v", r, r.MCP)
	}
}

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`/opt/nexus hook --host claude --managed PreToolUse`, []string{"/opt/nexus", "hook", "--host", "claude", "--managed", "PreToolUse"}},
		{HookCommand("/opt/my nexus/it's", "/srv/core dir", "SessionStart"), []string{"/opt/my nexus/it's", "hook", "--host", "claude", "--managed", "--core", "/srv/core dir", "SessionStart"}},
		{`"/a b/nexus" x\ y`, []string{"/a b/nexus", "x y"}},
		{`nexus  hook   `, []string{"nexus", "hook"}},
	} {
		got, ok := SplitCommand(c.in)
		if !ok || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{"", "nexus $HOME", "a | b", "a; b", "'open", `"$(x)"`, "a && b", "x > f"} {
		if _, ok := SplitCommand(bad); ok {
			t.Errorf("SplitCommand(%q) accepted", bad)
		}
	}
}

func FuzzSplitCommand(f *testing.F) {
	f.Add(HookCommand("/opt/it's", "/c d", "PreToolUse"))
	f.Add(`"a\"b" c\ d`)
	f.Fuzz(func(t *testing.T, s string) {
		words, ok := SplitCommand(s)
		if ok && len(words) == 0 {
			t.Fatal("ok without words")
		}
		// Quoting the words back must give the same words.
		if ok {
			var q []string
			for _, w := range words {
				q = append(q, shellQuote(w))
			}
			again, ok2 := SplitCommand(strings.Join(q, " "))
			if !ok2 || strings.Join(again, "\x00") != strings.Join(words, "\x00") {
				t.Fatalf("%q -> %q -> %q", s, words, again)
			}
		}
	})
}
