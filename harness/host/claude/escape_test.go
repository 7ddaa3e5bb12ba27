package claude

import (
	"errors"
	"fmt"
	"github.com/nexus-harness/nexus/harness/install"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// The escape suite for the installer (issue 13 follow-up): every writer
// (install and uninstall of each scope and of a plugin package) × every
// place a cloned repository (or a package folder) can hold a symlink that
// leads out, by absolute and by relative target. It fails on any byte,
// file or folder that appears, changes or disappears outside.

type installWriter struct {
	name string
	// anchor is the folder the writer stays beneath, relative to the
	// test's folder.
	anchor string
	// placements are the names beneath the anchor a symlink may take; the
	// writer goes through each of them.
	placements []string
	run        func(anchor string, install bool) ([]install.Change, error)
}

func pluginTestFiles() []install.OwnedFile {
	return append([]install.OwnedFile{
		{Path: ".claude-plugin/plugin.json", Content: []byte("{\"name\":\"nexus\"}\n")},
		{Path: ".mcp.json", Content: []byte("{\"mcpServers\":{}}\n")},
		{Path: "hooks/hooks.json", Content: []byte("{\"hooks\":{}}\n")},
	}, ownedFiles("1")...)
}

func testInstallOptions() InstallOptions {
	now := time.Date(2026, 4, 16, 8, 0, 0, 0, time.UTC)
	return InstallOptions{Command: "/opt/nexus", Version: "1", CoreVersion: "0.10.0", StatusLine: true, Nauro: true, Now: func() time.Time { return now }}
}

var installWriters = []installWriter{
	{
		name:   "project scope",
		anchor: "proj",
		placements: []string{".claude", ".claude/agents", ".claude/skills", ".claude/skills/nx-plan",
			".claude/settings.json", ".claude/nexus-install.json", ".claude/agents/architect.md", ".mcp.json"},
		run: func(anchor string, install bool) ([]install.Change, error) {
			o := testInstallOptions()
			o.Scope, o.Project, o.Files = ScopeProject, anchor, ownedFiles("1")
			if install {
				return Install(o)
			}
			return Uninstall(o)
		},
	},
	{
		name:   "plugin package",
		anchor: "plugin",
		placements: []string{"agents", "skills", "skills/nx-plan", ".claude-plugin", "hooks",
			".mcp.json", "nexus-install.json", "agents/architect.md"},
		run: func(anchor string, install bool) ([]install.Change, error) {
			return WritePlugin(anchor, pluginTestFiles(), testInstallOptions(), install)
		},
	},
}

// snapshot lists everything under dir: path, type, mode and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(b)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// linkOut replaces anchor/placement with a symlink to outside/<n>, moving
// what was there (an installed file or folder) to the target, or creating
// an empty folder (or a small JSON file, for a file name) when nothing was.
func linkOut(t *testing.T, anchor, placement, outside string, relative bool) (link string) {
	t.Helper()
	link = filepath.Join(anchor, filepath.FromSlash(placement))
	target := filepath.Join(outside, strings.ReplaceAll(placement, "/", "_"))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); err == nil {
		if err := os.Rename(link, target); err != nil {
			t.Fatal(err)
		}
	} else if strings.HasSuffix(placement, ".json") || strings.HasSuffix(placement, ".md") {
		if err := os.WriteFile(target, []byte("{\"outside\":true}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := target
	if relative {
		r, err := filepath.Rel(filepath.Dir(link), target)
		if err != nil {
			t.Fatal(err)
		}
		dest = r
	}
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestInstallNeverLeavesItsFolder(t *testing.T) {
	for _, w := range installWriters {
		for _, placement := range w.placements {
			for _, relative := range []bool{false, true} {
				for _, op := range []string{"install fresh", "install over an install", "uninstall"} {
					kind := "absolute"
					if relative {
						kind = "relative"
					}
					t.Run(fmt.Sprintf("%s/%s/%s %s", w.name, op, placement, kind), func(t *testing.T) {
						base := t.TempDir()
						anchor := filepath.Join(base, w.anchor)
						outside := filepath.Join(base, "outside")
						for _, d := range []string{anchor, outside} {
							if err := os.MkdirAll(d, 0o755); err != nil {
								t.Fatal(err)
							}
						}
						if op != "install fresh" {
							if _, err := w.run(anchor, true); err != nil {
								t.Fatal(err)
							}
						}
						link := linkOut(t, anchor, placement, outside, relative)
						before := snapshot(t, outside)
						_, err := w.run(anchor, op != "uninstall")
						if after := snapshot(t, outside); after != before {
							t.Fatalf("the outside folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
						}
						if got := refusedLink(err); got != link || !strings.Contains(err.Error(), link) {
							t.Errorf("err = %v (link %q), want a refusal naming the symlink %s", err, got, link)
						}
						// The link itself is left in place.
						if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
							t.Errorf("the symlink %s was replaced or removed", link)
						}
					})
				}
			}
		}
	}
}

// refusedLink is the symlink an install refusal names ("" when err is
// not one): a symlink on the way (install.SymlinkError), checked before anything
// is written, or one os.Root refused to follow out (EscapeError).
func refusedLink(err error) string {
	var se *install.SymlinkError
	var ee *state.EscapeError
	switch {
	case errors.As(err, &se):
		return se.Link
	case errors.As(err, &ee):
		return ee.Link
	}
	return ""
}

// A symlink that stays inside the project is refused too: install and
// uninstall act only on real files in real folders, so a repository's
// .claude -> somewhere-else (or .claude/skills/x -> ../../.git) cannot
// point nexus's writes and removals at another folder of the project.
func TestInstallRefusesSymlinksInside(t *testing.T) {
	for _, placement := range []string{".claude", ".claude/agents", ".claude/skills/nx-plan", ".claude/agents/architect.md", ".claude/settings.json", ".mcp.json", ".claude/nexus-install.json"} {
		for _, op := range []string{"install", "install --dry-run", "uninstall"} {
			t.Run(placement+"/"+op, func(t *testing.T) {
				proj := t.TempDir()
				o := testInstallOptions()
				o.Scope, o.Project, o.Files = ScopeProject, proj, ownedFiles("1")
				if op == "uninstall" {
					if _, err := Install(o); err != nil {
						t.Fatal(err)
					}
				}
				// The real thing moves to other/, the placement links to it.
				link := filepath.Join(proj, filepath.FromSlash(placement))
				target := filepath.Join(proj, "other", filepath.Base(placement))
				os.MkdirAll(filepath.Dir(target), 0o755)
				if _, err := os.Lstat(link); err == nil {
					if err := os.Rename(link, target); err != nil {
						t.Fatal(err)
					}
				} else if strings.Contains(filepath.Base(placement), ".") && placement != ".claude" {
					writeFile(t, target, "{}\n")
				} else {
					os.MkdirAll(target, 0o755)
				}
				os.MkdirAll(filepath.Dir(link), 0o755)
				rel, _ := filepath.Rel(filepath.Dir(link), target)
				if err := os.Symlink(rel, link); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, proj)
				o.DryRun = op == "install --dry-run"
				var err error
				if op == "uninstall" {
					_, err = Uninstall(o)
				} else {
					_, err = Install(o)
				}
				if got := refusedLink(err); got != link {
					t.Fatalf("err = %v, want a refusal naming %s", err, link)
				}
				if after := snapshot(t, proj); after != before {
					t.Fatalf("the project changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			})
		}
	}
}

// The user scope's files are the user's own, not a repository's: a home
// whose .claude and .claude.json are absolute symlinks into a dotfiles
// folder elsewhere is installed into and uninstalled from through them.
func TestUserScopeFollowsTheUsersSymlinks(t *testing.T) {
	base := t.TempDir()
	home, dotfiles := filepath.Join(base, "home"), filepath.Join(base, "dotfiles")
	for _, d := range []string{home, filepath.Join(dotfiles, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dotfiles, "claude.json"), []byte("{\"theme\":\"dark\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{".claude": "claude", ".claude.json": "claude.json"} {
		if err := os.Symlink(filepath.Join(dotfiles, target), filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	o := testInstallOptions()
	o.Scope, o.Home, o.Files = ScopeUser, home, ownedFiles("1")
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dotfiles, "claude", "agents", "architect.md")); got != string(ownedFiles("1")[0].Content) {
		t.Fatalf("agent = %q", got)
	}
	for _, f := range []string{filepath.Join(dotfiles, "claude", "settings.json"), filepath.Join(dotfiles, "claude.json")} {
		if !strings.Contains(readString(t, f), "/opt/nexus") {
			t.Errorf("%s does not register nexus", f)
		}
	}
	if !strings.Contains(readString(t, filepath.Join(dotfiles, "claude.json")), `"theme"`) {
		t.Error("install dropped the user's own ~/.claude.json settings")
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dotfiles, "claude", "agents", "architect.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("uninstall left the agent: %v", err)
	}
	for _, link := range []string{".claude", ".claude.json"} {
		if st, err := os.Lstat(filepath.Join(home, link)); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("uninstall replaced or removed the user's %s symlink", link)
		}
	}
}

// In the user scope ~/.claude itself may lead into a dotfiles folder, but
// inside it nothing nexus writes or removes may be a symlink: an agents/
// or skills/<name>/ folder linked elsewhere is refused, naming it.
func TestUserScopeRefusesSymlinksInsideTheClaudeFolder(t *testing.T) {
	for _, placement := range []string{"agents", "skills/nx-plan", "agents/architect.md", install.RecordName} {
		t.Run(placement, func(t *testing.T) {
			base := t.TempDir()
			home, elsewhere := filepath.Join(base, "home"), filepath.Join(base, "elsewhere")
			os.MkdirAll(filepath.Join(home, ".claude", filepath.Dir(placement)), 0o755)
			os.MkdirAll(elsewhere, 0o755)
			target := filepath.Join(elsewhere, "x")
			if strings.Contains(placement, ".") {
				writeFile(t, target, "{}\n")
			} else {
				os.Mkdir(target, 0o755)
			}
			link := filepath.Join(home, ".claude", filepath.FromSlash(placement))
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			o := testInstallOptions()
			o.Scope, o.Home, o.Files = ScopeUser, home, ownedFiles("1")
			before := snapshot(t, base)
			if _, err := Install(o); refusedLink(err) != link {
				t.Fatalf("install: %v, want a refusal naming %s", err, link)
			}
			if _, err := Uninstall(o); refusedLink(err) != link {
				t.Fatalf("uninstall: %v, want a refusal naming %s", err, link)
			}
			if after := snapshot(t, base); after != before {
				t.Fatalf("changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
