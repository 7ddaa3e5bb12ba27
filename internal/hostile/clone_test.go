package hostile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// A scenario is one fresh clone and everything around it, in a folder of
// its own (its root):
//
//	src/      the attacker's repository (git init, the files, one commit)
//	clone/    `git clone src clone`, then the attacker-equivalent local
//	          changes (FIFOs, sparse giants); the project nexus runs in
//	outside/  what the repository's symlinks lead to, outside the project
//	home/     HOME (and XDG_CONFIG_HOME, XDG_DATA_HOME under it)
//	nauro/    NAURO_HOME, cache/ XDG_CACHE_HOME, tmp/ TMPDIR: the user's
//	          own stores and temporary files, which nexus may use
//
// Every path in a snapshot is relative to the root, so a finding names
// clone/…, outside/…, home/… or src/….
type scenario struct {
	root, src, clone, outside, home string
	bin                             string // nexus
	env                             []string
}

// unwatched are the scenario's folders nexus may use freely: the user's
// decision registry and index cache and the temporary folder (the
// doctor's scratch projects live there).
var unwatched = map[string]bool{"nauro": true, "cache": true, "tmp": true}

func newScenario(root, bin, gitconfig string) (*scenario, error) {
	sc := &scenario{
		root: root, bin: bin,
		src: filepath.Join(root, "src"), clone: filepath.Join(root, "clone"),
		outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home"),
	}
	for _, d := range []string{sc.src, sc.outside, sc.home, filepath.Join(root, "nauro"), filepath.Join(root, "cache"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	sc.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + sc.home,
		"USER=hostile",
		"LANG=C",
		"XDG_CONFIG_HOME=" + filepath.Join(sc.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(sc.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
		"NAURO_HOME=" + filepath.Join(root, "nauro"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"GIT_CONFIG_GLOBAL=" + gitconfig,
		"GIT_CONFIG_NOSYSTEM=1",
	}
	return sc, nil
}

// git runs git in dir with the scenario's environment.
func (sc *scenario) git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, sc.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// build makes the attacker's repository from the base project and the
// row's changes, commits it, clones it with the real git CLI, then
// applies what a clone cannot carry.
func (sc *scenario) build(r repo, base string) error {
	if err := testenv.CopyDir(base, sc.src); err != nil {
		return fmt.Errorf("copy the base project: %w", err)
	}
	ship := &tree{sc: sc, dir: sc.src}
	out := &tree{sc: sc, dir: sc.outside}
	out.file("secret.txt", canaryText("outside/secret.txt"))
	if r.outside != nil {
		r.outside(out)
	}
	if r.ship != nil {
		r.ship(ship)
	}
	if err := errors.Join(ship.err, out.err); err != nil {
		return err
	}
	// -f: a repository may track files in folders it also ignores
	// (.nexus/state/…), as the reproductions do.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A", "-f"}, {"commit", "-q", "--no-verify", "-m", "ship " + r.name}} {
		if err := sc.git(sc.src, args...); err != nil {
			return err
		}
	}
	if err := sc.git(sc.root, "clone", "-q", "src", "clone"); err != nil {
		return err
	}
	if r.local != nil {
		local := &tree{sc: sc, dir: sc.clone}
		r.local(local)
		return local.err
	}
	return nil
}

// tree writes into one folder of a scenario; the first error sticks.
type tree struct {
	sc  *scenario
	dir string
	err error
}

func (t *tree) path(rel string) string {
	p := filepath.Join(t.dir, filepath.FromSlash(rel))
	if t.err == nil {
		t.err = os.MkdirAll(filepath.Dir(p), 0o755)
	}
	return p
}

// file writes a regular file (replacing whatever is there).
func (t *tree) file(rel string, content []byte) {
	p := t.path(rel)
	os.Remove(p)
	if t.err == nil {
		t.err = os.WriteFile(p, content, 0o644)
	}
}

// program writes an executable file.
func (t *tree) program(rel string, content []byte) {
	t.file(rel, content)
	if t.err == nil {
		t.err = os.Chmod(t.path(rel), 0o755)
	}
}

// link makes rel a symlink to target, exactly as given.
func (t *tree) link(rel, target string) {
	p := t.path(rel)
	os.RemoveAll(p)
	if t.err == nil {
		t.err = os.Symlink(target, p)
	}
}

// linkOut makes rel a relative symlink to outside/to: it leads out of
// the project from the source repository and from the clone alike.
func (t *tree) linkOut(rel, to string) {
	from := filepath.Dir(filepath.Join(t.sc.clone, filepath.FromSlash(rel)))
	target, err := filepath.Rel(from, filepath.Join(t.sc.outside, filepath.FromSlash(to)))
	if err != nil && t.err == nil {
		t.err = err
	}
	t.link(rel, target)
}

// linkOutAbs makes rel an absolute symlink to outside/to.
func (t *tree) linkOutAbs(rel, to string) {
	t.link(rel, filepath.Join(t.sc.outside, filepath.FromSlash(to)))
}

// fifo makes rel a named pipe. Git cannot carry one, so this is a local
// change after the clone: the same thing reaches a work tree through a
// build step, an unpacked archive or another tool run in the project.
func (t *tree) fifo(rel string) {
	p := t.path(rel)
	os.RemoveAll(p)
	if t.err == nil {
		t.err = syscall.Mkfifo(p, 0o644)
	}
}

// sparse makes rel a sparse file of size bytes (nothing allocated).
// Committing gigabytes is out of the question for a unit test, so this
// too is a local change after the clone (a download or a build output in
// the real world); for nexus the file is the same.
func (t *tree) sparse(rel string, size int64) {
	p := t.path(rel)
	os.RemoveAll(p)
	if t.err != nil {
		return
	}
	f, err := os.Create(p)
	if err == nil {
		err = f.Truncate(size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	t.err = err
}

// canary marks content that lives outside the project: it must never
// come back in an answer or be copied into a file nexus writes.
const canary = "HOSTILE-CANARY-7f3a9c"

func canaryText(where string) []byte {
	return []byte("# " + where + "\n\n" + canary + " (" + where + ")\n")
}

var (
	baseOnce sync.Once
	baseDir  string
	baseErr  error
)

// baseProject is the ordinary project every row starts from: a README
// and a source file, the tracked .nexus folders (memory, rules,
// context), nexus.yaml pointing the decision store at design/ (a Nauro
// store made by `nexus decision init` and `propose`), and a .claude
// folder with files nexus does not own (a slash command, CLAUDE.md).
func baseProject(bin, dir, gitconfig string) (string, error) {
	baseOnce.Do(func() {
		baseDir = filepath.Join(dir, "base")
		sc, err := newScenario(filepath.Join(dir, "base-scenario"), bin, gitconfig)
		if err != nil {
			baseErr = err
			return
		}
		b := &tree{sc: sc, dir: baseDir}
		b.file("README.md", []byte("# demo\n\nA small project.\n"))
		b.file("src/main.go", []byte("package main\n\nfunc main() {}\n"))
		b.file("docs/guide.md", []byte("# Guide\n"))
		b.file("vendor/README.md", []byte("Vendored code.\n"))
		b.file(".nexus/nexus.yaml", []byte("decisions:\n  store: design\n"))
		b.file(".nexus/memory/empirical-sqlite-lock-timeouts.md", []byte("# SQLite lock timeouts\n\nRetry with backoff.\n"))
		b.file(".nexus/rules/testing.md", []byte("<!-- tags: testing -->\nTables, not loops.\n"))
		b.file(".nexus/context/overview.md", []byte("# Overview\n\nA demo.\n"))
		b.file(".claude/commands/review.md", []byte("Review the change.\n"))
		b.file(".claude/CLAUDE.md", []byte("Be brief.\n"))
		if b.err != nil {
			baseErr = b.err
			return
		}
		for _, args := range [][]string{
			{"decision", "init", "demo", "--store", "design"},
			{"decision", "propose", "--store", "design", "--title", "Use Go for the command line", "--rationale", "Go builds static binaries that start fast, which hooks need."},
		} {
			o := run(bin, args, baseDir, sc.env, nil)
			if o.Code != 0 || o.Killed != "" {
				baseErr = fmt.Errorf("nexus %s: exit %d %s\n%s", strings.Join(args, " "), o.Code, o.Killed, o.Stderr)
				return
			}
		}
		// Lock files are the store's runtime files, not content.
		baseErr = filepath.WalkDir(baseDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				return os.Remove(p)
			}
			return err
		})
	})
	return baseDir, baseErr
}

// writeGitconfig writes the one git configuration every scenario uses
// (GIT_CONFIG_GLOBAL): nothing of the developer's own is read.
// An empty template folder spares every repository git's sample hooks.
func writeGitconfig(dir string) (string, error) {
	p, templates := filepath.Join(dir, "gitconfig"), filepath.Join(dir, "git-templates")
	if err := os.MkdirAll(templates, 0o755); err != nil {
		return "", err
	}
	return p, os.WriteFile(p, []byte("[user]\n\tname = Attacker\n\temail = attacker@example.com\n[init]\n\tdefaultBranch = main\n\ttemplateDir = "+templates+"\n[protocol \"file\"]\n\tallow = always\n[core]\n\tsymlinks = true\n"), 0o644)
}

// deep returns JSON text nested n levels deep inside its outermost value
// ("[[[…]]]").
func deep(n int) []byte {
	return append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
}
