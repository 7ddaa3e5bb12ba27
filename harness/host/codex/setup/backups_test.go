package setup

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/host/codex"
	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// backupsUnder lists the *.nexus-backup-* files beneath dir.
func backupsUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), ".nexus-backup-") {
			out = append(out, p)
		}
		return err
	})
	return out
}

// TestUninstallPrunesBackups: install, an install with another command
// (with --trust-hooks), then uninstall leave no backup of config.toml,
// hooks.json or the user's config.toml behind when uninstall restores them
// unchanged, in either scope; a file edited in between keeps the backups
// that differ from it, each named with why.
func TestUninstallPrunesBackups(t *testing.T) {
	for _, tc := range []struct {
		name, scope string
		edit        bool // the user edits config.toml between install and uninstall
	}{
		{"project", installpkg.ScopeProject, false},
		{"user", installpkg.ScopeUser, false},
		{"project, config.toml edited", installpkg.ScopeProject, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			userCfg := filepath.Join(f.home, ".codex", "config.toml")
			f.write(userCfg, userConfig)
			dir := f.project
			if tc.scope == installpkg.ScopeUser {
				dir = f.home
			}
			cfg, hooks := filepath.Join(dir, ".codex", "config.toml"), filepath.Join(dir, ".codex", "hooks.json")
			if tc.scope == installpkg.ScopeProject {
				f.write(cfg, "# the project's\nmodel = \"o3\"\n")
			}
			// hooks.json as nexus prints it: install rewrites it so (two-space
			// indentation), and a backup whose formatting alone differs stays.
			r, err := codex.EditHooks([]byte(userHooks), "/x", "", true)
			if err != nil {
				t.Fatal(err)
			}
			if r, err = codex.EditHooks(r.Data, "", "", false); err != nil {
				t.Fatal(err)
			}
			f.write(hooks, string(r.Data))
			before := snapshot(t, f.root)
			h := Host{}
			for _, cmd := range []string{"/opt/nexus/bin/nexus", "/usr/bin/nexus"} {
				req := f.request(tc.scope)
				req.Command, req.TrustHooks = cmd, true
				if _, err := h.Install(req); err != nil {
					t.Fatal(err)
				}
			}
			if len(backupsUnder(t, f.root)) == 0 {
				t.Fatal("the installs made no backup: the test proves nothing")
			}
			if tc.edit {
				f.write(cfg, "approval_policy = \"never\"\n"+f.read(cfg))
			}
			req := f.request(tc.scope)
			req.Command = "/usr/bin/nexus"
			changes, err := h.Uninstall(req)
			if err != nil {
				t.Fatal(err)
			}
			left := backupsUnder(t, f.root)
			if !tc.edit {
				if len(left) > 0 {
					t.Errorf("backups left after uninstall: %v\n%+v", left, changes)
				}
				if got := snapshot(t, f.root); !mapsEqual(got, before) {
					t.Errorf("files after uninstall differ from before install: %v vs %v", keys(got), keys(before))
				}
				return
			}
			if len(left) == 0 {
				t.Fatal("every backup of the edited config.toml was removed")
			}
			named := map[string]bool{}
			for _, ch := range changes {
				for _, n := range ch.Notes {
					if strings.HasPrefix(n, "kept: ") {
						named[ch.Path] = true
					}
				}
			}
			for _, b := range left {
				if !strings.HasPrefix(filepath.Base(b), "config.toml.") || filepath.Dir(b) != filepath.Dir(cfg) {
					t.Errorf("backup %s left, not one of the edited file", b)
				}
				if !named[b] {
					t.Errorf("backup %s left without a note saying why", b)
				}
			}
		})
	}
}
