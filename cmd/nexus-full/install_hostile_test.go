package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The attack of issue 22 item 1, reproduced: a repository commits
// .claude/gitdir -> ../.git and an install record naming gitdir/HEAD with
// the sha256 of its predictable content. In a real `git clone` of it,
// install, install --dry-run, uninstall and the same with --plugin DIR
// (a package folder inside the clone shipping the same trap) must change
// nothing in .git: nexus acts only on the files it renders itself.
func TestInstallCannotTouchGitThroughAShippedRecord(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: ", err)
	}
	base := t.TempDir()
	src, clone := filepath.Join(base, "src"), filepath.Join(base, "clone")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	// Files with content an attacker can predict in any fresh clone.
	record := fmt.Sprintf(`{"nexus":"0.0.1","files":[`+
		`{"path":"gitdir/HEAD","sha256":"%s"},`+
		`{"path":"agents/gitdir/HEAD","sha256":"%s"},`+
		`{"path":"skills/x/SKILL.md","sha256":"%s"}]}`+"\n",
		sum("ref: refs/heads/main\n"), sum("ref: refs/heads/main\n"), sum("x"))
	os.MkdirAll(src, 0o755)
	git(src, "init", "-q", "-b", "main")
	for _, folder := range []string{".claude", "plugin"} {
		dir := filepath.Join(src, folder)
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		up := "../.git"
		if err := os.Symlink(up, filepath.Join(dir, "gitdir")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../"+up, filepath.Join(dir, "agents", "gitdir")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "nexus-install.json"), []byte(record), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(src, "add", "-A")
	git(src, "commit", "-q", "-m", "trap")
	git(base, "clone", "-q", src, clone)
	if b, _ := os.ReadFile(filepath.Join(clone, ".git", "HEAD")); string(b) != "ref: refs/heads/main\n" {
		t.Fatalf("the clone's HEAD is %q: the record's hash would not match", b)
	}

	bin := nexusAlone(t)
	env := hookEnv(t, t.TempDir())
	before := treeDigest(t, filepath.Join(clone, ".git"))
	for _, step := range []struct {
		args []string
		// note: the record still lists the trap, so the run reports it.
		note bool
	}{
		{[]string{"install", "claude", "--dry-run"}, true},
		{[]string{"uninstall", "claude", "--dry-run"}, true},
		{[]string{"install", "claude", "--force"}, true},
		{[]string{"install", "claude"}, false},
		{[]string{"uninstall", "claude", "--force"}, false},
		{[]string{"uninstall", "claude"}, false},
		{[]string{"install", "claude", "--plugin", "plugin", "--dry-run"}, true},
		{[]string{"uninstall", "claude", "--plugin", "plugin", "--dry-run"}, true},
		{[]string{"install", "claude", "--plugin", "plugin"}, true},
		{[]string{"uninstall", "claude", "--plugin", "plugin", "--force"}, false},
	} {
		out, errOut, code := runNexus(t, bin, clone, env, "", step.args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", step.args, code, out, errOut)
		}
		if strings.Contains(out, "gitdir/HEAD: removed") || strings.Contains(out, ".git/") {
			t.Errorf("%v acted on .git:\n%s", step.args, out)
		}
		if step.note && !strings.Contains(out, "gitdir/HEAD: note: nexus-install.json lists it") {
			t.Errorf("%v did not report the record's foreign entry:\n%s%s", step.args, out, errOut)
		}
		if after := treeDigest(t, filepath.Join(clone, ".git")); after != before {
			t.Fatalf("%v changed .git (exit %d):\n%s%s\nbefore:\n%s\nafter:\n%s", step.args, code, out, errOut, before, after)
		}
		git(clone, "rev-parse", "HEAD")
	}
	// The symlinks the repository shipped are still there.
	for _, l := range []string{".claude/gitdir", ".claude/agents/gitdir", "plugin/gitdir"} {
		if st, err := os.Lstat(filepath.Join(clone, l)); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s was removed or replaced", l)
		}
	}
}

// A repository that ships a derived folder as a symlink into .git
// (.claude/agents -> ../.git) is refused before anything is written,
// naming the symlink.
func TestInstallRefusesAShippedSymlinkedAgentsFolder(t *testing.T) {
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.MkdirAll(filepath.Join(proj, ".claude"), 0o755)
	os.Symlink("../.git", filepath.Join(proj, ".claude", "agents"))
	bin := nexusAlone(t)
	env := hookEnv(t, t.TempDir())
	before := treeDigest(t, proj)
	for _, args := range [][]string{{"install", "claude"}, {"install", "claude", "--dry-run"}, {"uninstall", "claude"}} {
		out, errOut, code := runNexus(t, bin, proj, env, "", append([]string{"--project", proj}, args...)...)
		if code == 0 || !strings.Contains(errOut, filepath.Join(proj, ".claude", "agents")+" is a symlink") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if after := treeDigest(t, proj); after != before {
			t.Fatalf("%v changed the project:\nbefore:\n%s\nafter:\n%s", args, before, after)
		}
	}
}

// treeDigest lists every entry under dir with its type, mode and content
// hash (symlinks with their targets), sorted.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
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
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:8])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
