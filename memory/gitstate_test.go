package memory

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gcRepo is a project under git with two committed memory files on branch
// main, plus a side branch that conflicts with main on README.md.
func gcRepo(t *testing.T) *project {
	t.Helper()
	root := t.TempDir()
	isolateGit(t, root)
	p := newProjectAt(t, root, Options{}, time.Time{})
	p.write("empirical-first-file.md", "one\n")
	p.write("empirical-second-file.md", "two\n")
	writeFile(t, filepath.Join(p.dir, "README.md"), "base\n")
	git(t, p.dir, nil, "init", "-q")
	git(t, p.dir, nil, "add", "-A")
	git(t, p.dir, nil, "commit", "-q", "-m", "init")
	git(t, p.dir, nil, "switch", "-q", "-c", "side")
	writeFile(t, filepath.Join(p.dir, "README.md"), "side\n")
	git(t, p.dir, nil, "commit", "-q", "-am", "side")
	git(t, p.dir, nil, "switch", "-q", "main")
	writeFile(t, filepath.Join(p.dir, "README.md"), "main\n")
	git(t, p.dir, nil, "commit", "-q", "-am", "main")
	return p
}

// gitMayFail runs git where a non-zero exit is the point (a conflict).
func gitMayFail(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := execGit(dir, args...)
	cmd.Run()
}

// TestDeleteRefusesBusyOrMidOperationRepository (issue 13.12, 13.13): the
// deletion refuses before touching anything, and the refusal says how to
// proceed.
func TestDeleteRefusesBusyOrMidOperationRepository(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, p *project)
		want  []string
	}{
		{"index.lock", func(t *testing.T, p *project) {
			writeFile(t, filepath.Join(p.dir, ".git", "index.lock"), "")
		}, []string{"git is busy", "index.lock", "nothing was deleted"}},
		{"detached HEAD", func(t *testing.T, p *project) {
			git(t, p.dir, nil, "switch", "-q", "--detach", "HEAD")
		}, []string{"HEAD is detached", "git switch"}},
		{"mid-merge", func(t *testing.T, p *project) {
			gitMayFail(t, p.dir, "merge", "-q", "side")
		}, []string{"merge is in progress", "git merge --abort"}},
		{"mid-rebase", func(t *testing.T, p *project) {
			gitMayFail(t, p.dir, "rebase", "-q", "side")
		}, []string{"rebase is in progress", "git rebase --abort"}},
		{"mid-cherry-pick", func(t *testing.T, p *project) {
			gitMayFail(t, p.dir, "cherry-pick", "side")
		}, []string{"cherry-pick is in progress", "git cherry-pick --abort"}},
		{"mid-revert", func(t *testing.T, p *project) {
			git(t, p.dir, nil, "commit", "-q", "--allow-empty", "-m", "empty")
			writeFile(t, filepath.Join(p.dir, "README.md"), "later\n")
			git(t, p.dir, nil, "commit", "-q", "-am", "later")
			gitMayFail(t, p.dir, "revert", "--no-edit", "HEAD~2")
		}, []string{"in progress", "--abort"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := gcRepo(t)
			c.setup(t, p)
			head := git(t, p.dir, nil, "rev-parse", "HEAD")
			index := readFile(t, filepath.Join(p.dir, ".git", "index"))
			_, err := p.m.Delete(context.Background(), []string{"empirical-first-file.md"})
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("Delete = %v, want a refusal", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
			if got := git(t, p.dir, nil, "rev-parse", "HEAD"); got != head {
				t.Error("HEAD moved")
			}
			if readFile(t, filepath.Join(p.dir, ".git", "index")) != index {
				t.Error("the index changed")
			}
			if _, err := os.Stat(p.mem("empirical-first-file.md")); err != nil {
				t.Error("the file was deleted")
			}
		})
	}
	// The control: the same repository, idle, deletes.
	p := gcRepo(t)
	if _, err := p.m.Delete(context.Background(), []string{"empirical-first-file.md"}); err != nil {
		t.Fatalf("idle repository: %v", err)
	}
}

// TestDeleteHonoursCommitGPGSign (issue 13.14): with commit.gpgsign=true
// the gc commit is signed like `git commit` would sign it, and a signing
// failure refuses without moving HEAD.
func TestDeleteHonoursCommitGPGSign(t *testing.T) {
	bin := t.TempDir()
	good := filepath.Join(bin, "fake-gpg")
	// What git expects of gpg: the signature on stdout and SIG_CREATED on
	// the status descriptor (--status-fd=2).
	writeFile(t, good, "#!/bin/sh\ncat >/dev/null\necho '[GNUPG:] SIG_CREATED D 1 8 00 0 FAKE' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'\n")
	bad := filepath.Join(bin, "broken-gpg")
	writeFile(t, bad, "#!/bin/sh\necho 'gpg: no secret key' >&2\nexit 2\n")
	for _, f := range []string{good, bad} {
		if err := os.Chmod(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	p := gcRepo(t)
	git(t, p.dir, nil, "config", "commit.gpgsign", "true")
	git(t, p.dir, nil, "config", "user.signingkey", "FAKE")
	git(t, p.dir, nil, "config", "gpg.program", bad)
	head := git(t, p.dir, nil, "rev-parse", "HEAD")
	_, err := p.m.Delete(context.Background(), []string{"empirical-first-file.md"})
	if err == nil || !strings.Contains(err.Error(), "commit.gpgsign") || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Fatalf("Delete with a failing signer = %v, want a refusal naming commit.gpgsign", err)
	}
	if git(t, p.dir, nil, "rev-parse", "HEAD") != head {
		t.Fatal("HEAD moved although the commit could not be signed")
	}

	git(t, p.dir, nil, "config", "gpg.program", good)
	res, err := p.m.Delete(context.Background(), []string{"empirical-first-file.md"})
	if err != nil {
		t.Fatal(err)
	}
	if raw := git(t, p.dir, nil, "cat-file", "commit", res.Commit); !strings.Contains(raw, "gpgsig -----BEGIN PGP SIGNATURE-----") {
		t.Fatalf("the gc commit is not signed:\n%s", raw)
	}

	// Signing off: no signature.
	git(t, p.dir, nil, "config", "commit.gpgsign", "false")
	res, err = p.m.Delete(context.Background(), []string{"empirical-second-file.md"})
	if err != nil {
		t.Fatal(err)
	}
	if raw := git(t, p.dir, nil, "cat-file", "commit", res.Commit); strings.Contains(raw, "gpgsig") {
		t.Fatal("signed although commit.gpgsign is false")
	}
}

func execGit(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_EDITOR=true")
	return cmd
}
