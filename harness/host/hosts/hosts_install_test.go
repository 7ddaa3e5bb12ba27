package hosts

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// files lists every file under dir with its content, backups aside.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, ".nexus-backup-") {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Installing nexus for one host never touches another host's files, and
// uninstalling it takes away its own files only: Claude Code's and
// Codex's installs live side by side in one project and one home.
func TestInstallsOfHostsAreIndependent(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{install.ScopeProject, install.ScopeUser} {
		t.Run(scope, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
			for _, d := range []string{home, proj} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			req := install.Request{
				Scope: scope, Project: proj, Home: home, Command: "/opt/nexus/bin/nexus", Decisions: true, TrustHooks: true,
				Getenv: func(string) string { return "" },
				Catalog: func(p lifecycle.HostProfile) (*catalog.Catalog, error) {
					return catalog.Build(catalog.Options{Core: core, ToolPrefix: "nx_"}.WithHost(p))
				},
				Options: install.Options{Version: "test"},
			}
			installer := func(name string) install.Installer {
				h, err := Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				return h.(install.Installer)
			}
			do := func(name string, in bool) {
				t.Helper()
				var err error
				if in {
					_, err = installer(name).Install(req)
				} else {
					_, err = installer(name).Uninstall(req)
				}
				if err != nil {
					t.Fatalf("%s %v: %v", name, in, err)
				}
			}
			empty := files(t, root)
			do("claude", true)
			claudeOnly := files(t, root)
			do("codex", true)
			both := files(t, root)
			for p, c := range claudeOnly {
				if both[p] != c {
					t.Errorf("installing for Codex changed %s", p)
				}
			}
			if len(both) <= len(claudeOnly) {
				t.Fatal("installing for Codex wrote nothing")
			}
			do("codex", false)
			if got := files(t, root); !equal(got, claudeOnly) {
				t.Errorf("uninstalling Codex left %d files, want Claude Code's %d", len(got), len(claudeOnly))
			}
			do("codex", true)
			do("claude", false)
			codexOnly := files(t, root)
			for p, c := range codexOnly {
				if both[p] != c {
					t.Errorf("Claude Code's uninstall changed %s", p)
				}
			}
			for p := range claudeOnly {
				if _, ok := codexOnly[p]; ok && empty[p] == "" {
					t.Errorf("Claude Code's uninstall left %s", p)
				}
			}
			do("codex", false)
			if got := files(t, root); !equal(got, empty) {
				t.Errorf("after both uninstalls: %d files, want %d", len(got), len(empty))
			}
		})
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}
