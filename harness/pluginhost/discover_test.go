package pluginhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

func TestDiscoverPrecedenceAndProblems(t *testing.T) {
	exe := "/nonexistent/plugin" // discovery never runs anything
	sha := strings.Repeat("a", 64)
	project := t.TempDir()
	user := t.TempDir()
	cfgDir := t.TempDir()
	projectPlugins := ProjectPluginDir(project)

	cfg := plugintest.WriteManifest(t, cfgDir, plugintest.Spec{Name: "shared", Exe: exe, SHA: sha})
	plugintest.WriteManifest(t, projectPlugins, plugintest.Spec{Name: "shared", Exe: exe, SHA: sha}) // shadowed by config
	plugintest.WriteManifest(t, projectPlugins, plugintest.Spec{Name: "proj", Exe: exe, SHA: sha})
	plugintest.WriteManifest(t, user, plugintest.Spec{Name: "proj", Exe: exe, SHA: sha}) // shadowed by project
	plugintest.WriteManifest(t, user, plugintest.Spec{Name: "mine", Exe: exe, SHA: sha})
	if err := os.MkdirAll(filepath.Join(user, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "broken", ManifestFile), []byte("name: broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(user, "no-manifest"), 0o755); err != nil {
		t.Fatal(err)
	}

	found, problems := Discover(project, user, []string{filepath.Dir(cfg), "missing/plugin"})
	var got []string
	for _, m := range found {
		got = append(got, m.Name+"@"+string(m.Source))
	}
	if want := "shared@config proj@project mine@user"; strings.Join(got, " ") != want {
		t.Fatalf("found %v, want %s", got, want)
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		filepath.Join(project, "missing/plugin"),
		`plugin "shared" in ` + filepath.Join(projectPlugins, "shared", ManifestFile) + " is shadowed",
		`plugin "proj" in ` + filepath.Join(user, "proj", ManifestFile) + " is shadowed",
		filepath.Join(user, "broken", ManifestFile) + ":1:1: (top level): missing properties",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems do not mention %q:\n%s", want, all)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), all)
	}

	// Open keeps the usable ones and reports the rest.
	m, err := Open(Options{ProjectDir: project, UserDir: user, Paths: []string{cfg}, Logger: plugintest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.List()) != 3 || len(m.Problems()) != 3 {
		t.Fatalf("List %d, Problems %d", len(m.List()), len(m.Problems()))
	}
	if _, err := m.Inspect("nope"); err == nil {
		t.Fatal("Inspect of an unknown plugin succeeded")
	}
}

func TestDefaultUserDir(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got := DefaultUserDir(); got != "/xdg/nexus/plugins" {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := DefaultUserDir(); got != "/home/u/.config/nexus/plugins" {
		t.Errorf("without XDG_CONFIG_HOME: %s", got)
	}
}

func TestNewRejectsDuplicateNames(t *testing.T) {
	a := &Manifest{Name: "x", Path: "/a", Source: SourceProject}
	b := &Manifest{Name: "x", Path: "/b", Source: SourceUser}
	if _, err := New([]*Manifest{a, b}, Options{}); err == nil || !strings.Contains(err.Error(), `two plugins are named "x"`) {
		t.Fatalf("duplicate names: %v", err)
	}
}

func TestDiscoverOnlyEvent(t *testing.T) {
	exe := "/nonexistent/plugin"
	sha := strings.Repeat("a", 64)
	project := t.TempDir()
	dir := ProjectPluginDir(project)
	cfgDir := t.TempDir()
	pre := "  pre_tool_use: {timeout: 1s, on_failure: fail-open}"
	start := "  session_start: {timeout: 1s, on_failure: fail-open}"
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "guard", Exe: exe, SHA: sha, Events: pre})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "observer", Exe: exe, SHA: sha, Events: start})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "sloppy", Exe: exe, SHA: sha, Events: start, Extra: "bogus: 1\n"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "broken-guard", Exe: exe, SHA: sha, Events: pre, Extra: "bogus: 1\n"})
	// A configured plugin that does not subscribe shadows a project one that does.
	cfg := plugintest.WriteManifest(t, cfgDir, plugintest.Spec{Name: "shadowed", Exe: exe, SHA: sha, Events: start})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "shadowed", Exe: exe, SHA: sha, Events: pre})

	found, problems := discover(project, "", []string{cfg}, "pre_tool_use", "")
	if len(found) != 1 || found[0].Name != "guard" {
		t.Fatalf("found %+v", found)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "broken-guard") {
		t.Fatalf("problems %v, want only the subscribed broken manifest", problems)
	}
	all, allProblems := Discover(project, "", []string{cfg})
	if len(all) != 3 || len(allProblems) != 3 { // found: guard, observer, shadowed (config); problems: sloppy, broken-guard, shadowed (project)
		t.Fatalf("without a filter: %d found, %d problems", len(all), len(allProblems))
	}
}

func TestDiscoverOnlyTool(t *testing.T) {
	exe, sha := "/nonexistent/plugin", strings.Repeat("a", 64)
	dir := t.TempDir()
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "bashguard", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open, tools: [Bash]}"})
	plugintest.WriteManifest(t, dir, plugintest.Spec{Name: "anytool", Exe: exe, SHA: sha, Events: "  pre_tool_use: {timeout: 1s, on_failure: fail-open}"})
	for tool, want := range map[string]string{"Bash": "anytool bashguard", "Read": "anytool", "": "anytool bashguard"} {
		found, _ := discover("", dir, nil, "pre_tool_use", tool)
		var names []string
		for _, m := range found {
			names = append(names, m.Name)
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("tool %q: found %q, want %q", tool, got, want)
		}
	}
}
