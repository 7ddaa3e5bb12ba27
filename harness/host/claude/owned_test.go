package claude

import (
	"github.com/nexus-harness/nexus/harness/install"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ownedFiles(version string) []install.OwnedFile {
	return []install.OwnedFile{
		{Path: "agents/architect.md", Content: []byte("---\nname: architect\n---\nbody " + version + "\n")},
		{Path: "skills/nx-plan/SKILL.md", Content: []byte("---\nname: nx-plan\n---\nplan " + version + "\n")},
	}
}

func findChange(changes []install.Change, suffix string) *install.Change {
	for i := range changes {
		if strings.HasSuffix(changes[i].Path, suffix) {
			return &changes[i]
		}
	}
	return nil
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOwnedFilesLifecycle(t *testing.T) {
	proj := t.TempDir()
	dir := filepath.Join(proj, ".claude")
	now := time.Date(2026, 4, 16, 8, 0, 0, 0, time.UTC)
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", Now: func() time.Time { return now }, Version: "1", CoreVersion: "0.10.0"}

	// Dry run writes nothing but shows the new files.
	o.Files = ownedFiles("v1")
	o.DryRun = true
	changes, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if ch := findChange(changes, "agents/architect.md"); ch == nil || !ch.Changed || !strings.Contains(ch.Diff, "new file") {
		t.Fatalf("dry run: %+v", changes)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("dry run created the .claude folder")
	}

	// Install writes the files and the record.
	o.DryRun = false
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, "agents/architect.md")); !strings.Contains(got, "body v1") {
		t.Fatalf("architect.md = %q", got)
	}
	rec, err := ReadRecord(dir)
	if err != nil || rec == nil || len(rec.Files) != 2 || rec.Core != "0.10.0" {
		t.Fatalf("record %+v, %v", rec, err)
	}

	// Again: nothing changes.
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Changed {
			t.Errorf("second install changed %s", ch.Path)
		}
	}

	// The distribution changed: the dry run shows the diff, install updates.
	o.Files = ownedFiles("v2")
	o.DryRun = true
	changes, _ = Install(o)
	if ch := findChange(changes, "agents/architect.md"); ch == nil || !strings.Contains(ch.Diff, "-body v1") || !strings.Contains(ch.Diff, "+body v2") {
		t.Fatalf("upgrade dry run: %+v", ch)
	}
	o.DryRun = false
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, "agents/architect.md")); !strings.Contains(got, "body v2") {
		t.Fatalf("not upgraded: %q", got)
	}

	// The user edits a file: an upgrade leaves it alone and says why.
	edited := filepath.Join(dir, "agents/architect.md")
	writeFile(t, edited, "my own architect\n")
	o.Files = ownedFiles("v3")
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	ch := findChange(changes, "agents/architect.md")
	if ch == nil || ch.Changed || len(ch.Notes) == 0 || !strings.Contains(ch.Notes[0], "edited after nexus wrote it") || !strings.Contains(ch.Notes[0], "--force") {
		t.Fatalf("edited file: %+v", ch)
	}
	if readString(t, edited) != "my own architect\n" {
		t.Fatal("an edited file was overwritten without --force")
	}
	if got := readString(t, filepath.Join(dir, "skills/nx-plan/SKILL.md")); !strings.Contains(got, "plan v3") {
		t.Fatal("the unedited skill was not upgraded")
	}

	// A same-named file nexus never wrote is not touched either.
	foreign := filepath.Join(dir, "agents/writer.md")
	writeFile(t, foreign, "someone's writer\n")
	o.Files = append(ownedFiles("v3"), install.OwnedFile{Path: "agents/writer.md", Content: []byte("nexus writer\n")})
	changes, _ = Install(o)
	if ch := findChange(changes, "agents/writer.md"); ch == nil || ch.Changed || !strings.Contains(ch.Notes[0], "did not write it") {
		t.Fatalf("foreign file: %+v", ch)
	}

	// --force replaces the edited file, keeping a backup.
	o.Force = true
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	ch = findChange(changes, "agents/architect.md")
	if ch == nil || !ch.Changed || ch.Backup == "" || readString(t, ch.Backup) != "my own architect\n" {
		t.Fatalf("forced: %+v", ch)
	}
	if got := readString(t, edited); !strings.Contains(got, "body v3") {
		t.Fatal("--force did not replace the edited file")
	}
	o.Force = false

	// A skill the distribution no longer renders is not nexus's to act on
	// any more (only derived paths are): it stays, is named, and leaves
	// the record.
	o.Files = []install.OwnedFile{o.Files[0], o.Files[2]}
	changes, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if ch := findChange(changes, "skills/nx-plan/SKILL.md"); ch == nil || ch.Changed || len(ch.Notes) != 1 || !strings.Contains(ch.Notes[0], "left it alone") {
		t.Fatalf("dropped skill: %+v", ch)
	}
	if got := readString(t, filepath.Join(dir, "skills/nx-plan/SKILL.md")); !strings.Contains(got, "plan v3") {
		t.Fatal("the dropped skill was changed")
	}
	if rec, _ := ReadRecord(dir); rec == nil || len(rec.Files) != 2 {
		t.Fatalf("record after the drop: %+v", rec)
	}

	// Uninstall removes the derived files the record lists, and the record.
	writeFile(t, filepath.Join(dir, "agents/mine.md"), "mine\n")
	if _, err := Uninstall(InstallOptions{Scope: ScopeProject, Project: proj, Files: o.Files}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"agents/architect.md", "agents/writer.md", install.RecordName} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived uninstall", gone)
		}
	}
	if readString(t, filepath.Join(dir, "agents/mine.md")) != "mine\n" {
		t.Error("uninstall touched a file nexus did not write")
	}
}

func TestUninstallKeepsEditedFiles(t *testing.T) {
	proj := t.TempDir()
	dir := filepath.Join(proj, ".claude")
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", Files: ownedFiles("v1")}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "agents/architect.md"), "edited\n")
	changes, err := Uninstall(InstallOptions{Scope: ScopeProject, Project: proj, Files: ownedFiles("v2")})
	if err != nil {
		t.Fatal(err)
	}
	if ch := findChange(changes, "agents/architect.md"); ch == nil || ch.Changed || !strings.Contains(ch.Notes[0], "--force") {
		t.Fatalf("%+v", ch)
	}
	if readString(t, filepath.Join(dir, "agents/architect.md")) != "edited\n" {
		t.Fatal("uninstall removed an edited file")
	}
	if _, err := os.Stat(filepath.Join(dir, "skills/nx-plan/SKILL.md")); !os.IsNotExist(err) {
		t.Fatal("the unedited skill survived uninstall")
	}
}

func TestOwnedPathsAreValidated(t *testing.T) {
	proj := t.TempDir()
	for _, p := range []string{"../escape.md", "/abs.md", "agents/../../x.md", ".hidden/x.md", "agents\\x.md", install.RecordName} {
		o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", Files: []install.OwnedFile{{Path: p, Content: []byte("x")}}}
		if _, err := Install(o); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
	writeFile(t, filepath.Join(proj, ".claude", install.RecordName), `{"nexus":"1","files":[{"path":"../../etc/passwd","sha256":"`+strings.Repeat("0", 64)+`"}]}`)
	if _, err := Uninstall(InstallOptions{Scope: ScopeProject, Project: proj, Files: ownedFiles("v1")}); err == nil {
		t.Error("a record naming a path outside the folder was accepted")
	}
}

func TestCheckOwned(t *testing.T) {
	proj := t.TempDir()
	dir := filepath.Join(proj, ".claude")
	files := append(ownedFiles("v1"), install.OwnedFile{Path: "agents/tester.md", Content: []byte("t\n")})
	if _, err := Install(InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", Files: files}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "agents/architect.md"), "edited\n")
	os.Remove(filepath.Join(dir, "agents/tester.md"))
	next := append(ownedFiles("v2")[1:], ownedFiles("v1")[0], files[2], install.OwnedFile{Path: "agents/x.md", Content: []byte("x")})
	writeFile(t, filepath.Join(dir, "agents/x.md"), "other\n")
	st, err := CheckOwned(dir, next)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"skills/nx-plan/SKILL.md": install.OwnedOutdated, "agents/architect.md": install.OwnedEdited, "agents/tester.md": install.OwnedMissing, "agents/x.md": install.OwnedForeign}
	for _, s := range st {
		if want[s.Path] != s.State {
			t.Errorf("%s: %s, want %s", s.Path, s.State, want[s.Path])
		}
	}
}

func TestInstallStatusLineAndCoreDir(t *testing.T) {
	proj := t.TempDir()
	settings := filepath.Join(proj, ".claude", "settings.json")
	o := InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", StatusLine: true, CoreDir: "/srv/nexus core"}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	m := readJSON(t, settings)
	sl, _ := m["statusLine"].(map[string]any)
	if sl["command"] != "/opt/nexus statusline --managed" || sl["type"] != "command" {
		t.Fatalf("statusLine %v", m["statusLine"])
	}
	if got := m["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"]; got != "/opt/nexus hook --host claude --managed --core '/srv/nexus core' PreToolUse" {
		t.Errorf("hook command %v", got)
	}
	mcp := readJSON(t, filepath.Join(proj, ".mcp.json"))["mcpServers"].(map[string]any)["nexus"].(map[string]any)
	if args := mcp["args"].([]any); len(args) != 3 || args[2] != "/srv/nexus core" {
		t.Errorf("mcp args %v", args)
	}
	// Without a chosen core dir the commands name none again.
	o.CoreDir, o.StatusLine = "", false
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	m = readJSON(t, settings)
	if strings.Contains(readString(t, settings), "--core") || m["statusLine"] == nil {
		t.Errorf("re-install without --core or --statusline: %s", readString(t, settings))
	}
	// Uninstall removes nexus's status line; another tool's stays.
	if _, err := Uninstall(InstallOptions{Scope: ScopeProject, Project: proj}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Errorf("settings left after uninstall: %s", readString(t, settings))
	}
	writeFile(t, settings, `{"statusLine":{"type":"command","command":"my-line"}}`)
	changes, err := Install(InstallOptions{Scope: ScopeProject, Project: proj, Command: "/opt/nexus", StatusLine: true})
	if err != nil {
		t.Fatal(err)
	}
	if ch := findChange(changes, "settings.json"); ch == nil || len(ch.Notes) == 0 || !strings.Contains(ch.Notes[0], "left it alone") {
		t.Errorf("foreign status line: %+v", ch)
	}
	if readJSON(t, settings)["statusLine"].(map[string]any)["command"] != "my-line" {
		t.Error("a foreign status line was replaced")
	}
}

func TestRecordIsSchemaChecked(t *testing.T) {
	for _, bad := range []string{
		`{"nexus":"1","files":[{"path":"agents/a.md","sha256":"xyz"}]}`,
		`{"nexus":"1","files":[],"extra":1}`,
		`{"files":[]}`,
		`[]`,
	} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, install.RecordName), bad)
		if _, err := ReadRecord(dir); err == nil || !strings.Contains(err.Error(), install.RecordName) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
