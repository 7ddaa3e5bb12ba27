package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func serverArgs(t *testing.T, mcpPath, name string) (string, bool) {
	t.Helper()
	servers, _ := readJSON(t, mcpPath)["mcpServers"].(map[string]any)
	e, ok := servers[name].(map[string]any)
	if !ok {
		return "", false
	}
	var args []string
	for _, a := range e["args"].([]any) {
		args = append(args, a.(string))
	}
	return e["command"].(string) + " " + strings.Join(args, " "), true
}

// With the decision store enabled, install registers it as its own
// server "nauro" beside "nexus"; turning it off again folds it back into
// "nexus"; a foreign "nauro" entry is left alone and the store stays on
// "nexus"; uninstall removes both.
func TestInstallNauroServer(t *testing.T) {
	proj := t.TempDir()
	mcp := filepath.Join(proj, ".mcp.json")
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/bin/nexus", Nauro: true}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if got, _ := serverArgs(t, mcp, "nauro"); got != "/bin/nexus mcp --only decisions" {
		t.Errorf("nauro = %q", got)
	}
	if got, _ := serverArgs(t, mcp, "nexus"); got != "/bin/nexus mcp --without decisions" {
		t.Errorf("nexus = %q", got)
	}
	if ch, err := Install(o); err != nil || ch[1].Changed {
		t.Errorf("second install changed .mcp.json: %+v %v", ch, err)
	}

	o.Nauro = false
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if _, ok := serverArgs(t, mcp, "nauro"); ok {
		t.Error("nauro entry kept with the store folded back")
	}
	if got, _ := serverArgs(t, mcp, "nexus"); got != "/bin/nexus mcp" {
		t.Errorf("nexus = %q", got)
	}

	writeFile(t, mcp, `{"mcpServers":{"nauro":{"command":"nauro","args":["serve","--stdio"]}}}`)
	o.Nauro = true
	ch, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := serverArgs(t, mcp, "nauro"); got != "nauro serve --stdio" {
		t.Errorf("a foreign nauro entry was touched: %q", got)
	}
	if got, _ := serverArgs(t, mcp, "nexus"); got != "/bin/nexus mcp" {
		t.Errorf("nexus = %q, want every tool on it", got)
	}
	if len(ch[1].Notes) == 0 || !strings.Contains(ch[1].Notes[0], `"nauro" already exists`) {
		t.Errorf("notes = %v", ch[1].Notes)
	}

	writeFile(t, mcp, `{}`)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mcp); !os.IsNotExist(err) {
		t.Errorf(".mcp.json left after uninstall: %v", err)
	}
}
