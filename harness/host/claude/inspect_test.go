package claude

import (
	"path/filepath"
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
		for _, ev := range []string{PreToolUse, SessionEnd} {
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
