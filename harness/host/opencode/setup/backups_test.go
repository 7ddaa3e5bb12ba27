package setup_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/host/opencode/setup"
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

// TestUninstallPrunesBackups: install, an install with another command,
// then uninstall leave no backup of opencode.json behind when uninstall
// restores it unchanged, in either scope; an opencode.json edited in
// between keeps the backups that differ from it, each named with why.
func TestUninstallPrunesBackups(t *testing.T) {
	const mine = "{\n  // my settings\n  \"theme\": \"dark\",\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\", \"command\": [\"docs-mcp\"]}\n  }\n}\n"
	for _, tc := range []struct {
		name, scope string
		edit        bool
	}{
		{"project", installpkg.ScopeProject, false},
		{"user", installpkg.ScopeUser, false},
		{"project, opencode.json edited", installpkg.ScopeProject, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, proj, home := installReq(t, tc.scope)
			root := filepath.Dir(proj)
			cfg := filepath.Join(proj, "opencode.json")
			if tc.scope == installpkg.ScopeUser {
				cfg = filepath.Join(home, ".config", "opencode", "opencode.json")
			}
			if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, []byte(mine), 0o644); err != nil {
				t.Fatal(err)
			}
			h := setup.Host{}
			for _, cmd := range []string{"/opt/nexus/bin/nexus", "/usr/bin/nexus"} {
				r := req
				r.Command = cmd
				if _, err := h.Install(r); err != nil {
					t.Fatal(err)
				}
			}
			if len(backupsUnder(t, root)) == 0 {
				t.Fatal("the installs made no backup: the test proves nothing")
			}
			if tc.edit {
				b, _ := os.ReadFile(cfg)
				if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `"dark"`, `"light"`, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			req.Command = "/usr/bin/nexus"
			changes, err := h.Uninstall(req)
			if err != nil {
				t.Fatal(err)
			}
			left := backupsUnder(t, root)
			got, _ := os.ReadFile(cfg)
			if !tc.edit {
				if len(left) > 0 {
					t.Errorf("backups left after uninstall: %v", left)
				}
				if string(got) != mine {
					t.Errorf("opencode.json after uninstall:\n%s\nwant\n%s", got, mine)
				}
				return
			}
			if len(left) == 0 {
				t.Fatal("every backup of the edited opencode.json was removed")
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
				if !strings.HasPrefix(b, cfg+".nexus-backup-") || !named[b] {
					t.Errorf("backup %s left: not of opencode.json, or not named in %+v", b, changes)
				}
			}
		})
	}
}
