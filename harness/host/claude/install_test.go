package claude

import (
	"encoding/json"
	"github.com/nexus-harness/nexus/harness/install"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const userSettings = `{
  "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
  },
  "big": 12345678901234567890
}
`

func TestInstallProject(t *testing.T) {
	proj := t.TempDir()
	settings := filepath.Join(proj, ".claude", "settings.json")
	mcp := filepath.Join(proj, ".mcp.json")
	writeFile(t, settings, userSettings)
	writeFile(t, mcp, `{"mcpServers":{"other":{"command":"other-server","args":["--stdio"]}}}`)
	now := time.Date(2026, 4, 16, 8, 0, 0, 0, time.UTC)
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus bin/nexus", Now: func() time.Time { return now }}

	// Dry run: diffs, nothing written.
	o.DryRun = true
	changes, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || !changes[0].Changed || !changes[1].Changed || changes[0].Backup != "" {
		t.Fatalf("dry run %+v", changes)
	}
	if !strings.Contains(changes[0].Diff, "+            \"command\": \"'/opt/nexus bin/nexus' hook --host claude --managed PreToolUse\",") {
		t.Errorf("diff lacks the quoted command:\n%s", changes[0].Diff)
	}
	if b, _ := os.ReadFile(settings); string(b) != userSettings {
		t.Fatal("dry run wrote settings.json")
	}

	o.DryRun = false
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if changes[0].Backup == "" || changes[1].Backup == "" {
		t.Fatalf("no backups: %+v", changes)
	}
	if b, _ := os.ReadFile(changes[0].Backup); string(b) != userSettings {
		t.Error("backup does not hold the old content")
	}
	s := readJSON(t, settings)
	hooks := s["hooks"].(map[string]any)
	for _, ie := range InstalledEvents {
		groups, ok := hooks[ie.Event].([]any)
		if !ok {
			t.Fatalf("no %s hooks", ie.Event)
		}
		last := groups[len(groups)-1].(map[string]any)
		h := last["hooks"].([]any)[0].(map[string]any)
		if h["command"] != HookCommand("/opt/nexus bin/nexus", "", ie.Event) || h["type"] != "command" {
			t.Errorf("%s handler %v", ie.Event, h)
		}
		if m, _ := last["matcher"].(string); m != ie.Matcher {
			t.Errorf("%s matcher %q", ie.Event, m)
		}
	}
	// Foreign entries and settings survive, in order, numbers unchanged.
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || pre[0].(map[string]any)["matcher"] != "Bash" {
		t.Errorf("PreToolUse groups %v", pre)
	}
	if _, ok := hooks["Notification"]; !ok || s["model"] != "opus" {
		t.Error("foreign settings lost")
	}
	raw, _ := os.ReadFile(settings)
	if !strings.Contains(string(raw), "12345678901234567890") || strings.Index(string(raw), `"permissions"`) > strings.Index(string(raw), `"model"`) {
		t.Errorf("number or member order changed:\n%s", raw)
	}
	servers := readJSON(t, mcp)["mcpServers"].(map[string]any)
	if _, ok := servers["other"]; !ok {
		t.Error("foreign MCP server lost")
	}
	nx := servers["nexus"].(map[string]any)
	if nx["command"] != "/opt/nexus bin/nexus" || nx["args"].([]any)[0] != "mcp" || nx["type"] != "stdio" {
		t.Errorf("nexus server %v", nx)
	}

	// Idempotent.
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Changed || ch.Backup != "" {
			t.Errorf("second install changed %s:\n%s", ch.Path, ch.Diff)
		}
	}
	// The executable moved: entries are updated in place, not duplicated.
	o.Command = "/usr/local/bin/nexus"
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(settings)
	if strings.Count(string(raw), "--managed") != len(InstalledEvents) || strings.Contains(string(raw), "/opt/nexus") {
		t.Errorf("after a move:\n%s", raw)
	}

	// Uninstall restores the user's content exactly (modulo formatting).
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, settings)
	var want map[string]any
	_ = json.Unmarshal([]byte(userSettings), &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("after uninstall\n got %s\nwant %s", gb, wb)
	}
	if servers := readJSON(t, mcp)["mcpServers"].(map[string]any); len(servers) != 1 || servers["other"] == nil {
		t.Errorf("MCP servers after uninstall: %v", servers)
	}
	// A second uninstall changes nothing.
	changes, err = Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Changed {
			t.Errorf("second uninstall changed %s", ch.Path)
		}
	}
}

func TestInstallFreshAndUserScope(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".claude.json"), `{"numStartups": 4, "projects": {"/x": {"allowedTools": []}}}`)
	o := InstallOptions{Scope: ScopeUser, Home: home, Command: "/bin/nexus"}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if _, ok := readJSON(t, filepath.Join(home, ".claude", "settings.json"))["hooks"]; !ok {
		t.Error("no hooks in ~/.claude/settings.json")
	}
	cj := readJSON(t, filepath.Join(home, ".claude.json"))
	if cj["numStartups"] != float64(4) || cj["mcpServers"].(map[string]any)["nexus"] == nil {
		t.Errorf("~/.claude.json %v", cj)
	}
	// Uninstall removes the files nexus created, keeps the one it did not.
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Error("the settings file nexus created is still there")
	}
	if cj := readJSON(t, filepath.Join(home, ".claude.json")); cj["mcpServers"] != nil || cj["numStartups"] != float64(4) {
		t.Errorf("~/.claude.json after uninstall %v", cj)
	}
}

func TestInstallLeavesForeignThingsAlone(t *testing.T) {
	proj := t.TempDir()
	mcp := filepath.Join(proj, ".mcp.json")
	foreign := `{"mcpServers":{"nexus":{"command":"npx","args":["some-other-nexus"]}}}`
	writeFile(t, mcp, foreign)
	// A hand-written nexus hook without the marker is not ours.
	settings := filepath.Join(proj, ".claude", "settings.json")
	writeFile(t, settings, `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"nexus hook --host claude SessionEnd"}]}]}}`)
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/bin/nexus"}
	changes, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if changes[1].Changed || len(changes[1].Notes) != 1 || !strings.Contains(changes[1].Notes[0], "left it alone") {
		t.Errorf("foreign server: %+v", changes[1])
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(mcp); string(b) != foreign {
		t.Errorf("foreign server touched: %s", b)
	}
	s := readJSON(t, settings)
	if groups := s["hooks"].(map[string]any)["SessionEnd"].([]any); len(groups) != 1 {
		t.Errorf("hand-written hook removed: %v", groups)
	}
	// Invalid JSON is refused, never rewritten.
	writeFile(t, settings, `{"hooks": [}`)
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid settings: %v", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != `{"hooks": [}` {
		t.Error("invalid settings rewritten")
	}
	if _, err := Install(InstallOptions{Scope: "team", Project: proj, Command: "x"}); err == nil {
		t.Error("unknown scope accepted")
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\nf\ng\nh\n")
	b := []byte("a\nb\nc\nd\nX\nf\ng\nh\ni\n")
	d := install.UnifiedDiff("old", "new", a, b)
	want := "--- old\n+++ new\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n+i\n"
	if d != want {
		t.Errorf("diff\n%s\nwant\n%s", d, want)
	}
	if install.UnifiedDiff("a", "b", a, a) != "" {
		t.Error("equal inputs diff")
	}
}

// TestInstallUninstallLeavesNothing (issue 26): install, install again
// with the status line, then uninstall, in a clean project and a clean
// home, leaves exactly what was there before: no backup of nexus's own
// content is made, and none is left behind. A user's file nexus edited
// comes back byte for byte, and its backup goes too; when it differs from
// its backup (the host rewrote it meanwhile), the backup stays, named.
func TestInstallUninstallLeavesNothing(t *testing.T) {
	claudeJSON := "{\n  \"numStartups\": 4\n}\n"
	for _, tc := range []struct {
		name, scope string
		before      map[string]string // files before install, relative to the project or home
		between     map[string]string // written after install (the host's own changes)
		kept        []string          // backups left, named
	}{
		{name: "project", scope: ScopeProject},
		{name: "user", scope: ScopeUser},
		{name: "user with Claude Code's file", scope: ScopeUser, before: map[string]string{".claude.json": claudeJSON}},
		{name: "user, Claude Code rewrote its file", scope: ScopeUser, before: map[string]string{".claude.json": claudeJSON},
			between: map[string]string{".claude.json": "{\n  \"numStartups\": 5,\n  \"mcpServers\": {\"nexus\": {\"type\": \"stdio\", \"command\": \"/bin/nexus\", \"args\": [\"mcp\"]}}\n}\n"},
			kept:    []string{".claude.json.nexus-backup-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, c := range tc.before {
				writeFile(t, filepath.Join(dir, rel), c)
			}
			before := filesIn(t, dir)
			now := time.Date(2026, 4, 16, 8, 0, 0, 0, time.UTC)
			o := InstallOptions{Scope: tc.scope, Project: dir, Home: dir, Command: "/bin/nexus", Files: ownedFiles("v1"),
				Now: func() time.Time { now = now.Add(time.Second); return now }}
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			o.StatusLine = true
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			for rel, c := range tc.between {
				writeFile(t, filepath.Join(dir, rel), c)
			}
			changes, err := Uninstall(o)
			if err != nil {
				t.Fatal(err)
			}
			after := filesIn(t, dir)
			var left []string
			for rel := range after {
				if _, ok := before[rel]; !ok {
					left = append(left, rel)
				}
			}
			if len(left) != len(tc.kept) {
				t.Fatalf("left behind %v, want %v", left, tc.kept)
			}
			for i, k := range tc.kept {
				if !strings.HasPrefix(left[i], k) {
					t.Errorf("left %s, want %s*", left[i], k)
				}
				if ch := findChange(changes, left[i]); ch == nil || len(ch.Notes) != 1 || !strings.HasPrefix(ch.Notes[0], "kept: ") {
					t.Errorf("the kept backup %s is not named with why: %+v", left[i], ch)
				}
			}
			if tc.between == nil {
				for rel, c := range before {
					if after[rel] != c {
						t.Errorf("%s after uninstall:\n%s\nwas\n%s", rel, after[rel], c)
					}
				}
			}
		})
	}
}

// filesIn maps every file beneath dir to its content.
func filesIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

// TestInstallWarnsOfBothScopes: installing in one scope while nexus's
// hooks are in the other says so at once, and how to keep one.
func TestInstallWarnsOfBothScopes(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	req := install.Request{Project: proj, Home: home, Command: "/bin/nexus"}
	warned := func(changes []install.Change) bool {
		for _, ch := range changes {
			for _, n := range ch.Notes {
				if strings.Contains(n, "every event would reach nexus twice") && strings.Contains(n, "nexus uninstall claude --scope user") {
					return true
				}
			}
		}
		return false
	}
	req.Scope = ScopeProject
	changes, err := Host{}.Install(req)
	if err != nil || warned(changes) {
		t.Fatalf("the first scope: %v, warned %v", err, warned(changes))
	}
	req.Scope = ScopeUser
	if changes, err = (Host{}).Install(req); err != nil || !warned(changes) {
		t.Fatalf("user scope after the project's: %v, no warning in %+v", err, changes)
	}
	if _, err := (Host{}).Uninstall(req); err != nil {
		t.Fatal(err)
	}
	req.Scope = ScopeProject
	if changes, err = (Host{}).Install(req); err != nil || warned(changes) {
		t.Fatalf("one scope again: %v, warned %v", err, warned(changes))
	}
}
