package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkRepoIdle refuses a deletion before anything is touched when the
// repository is in a state where a commit made by nexus would go wrong:
//
//   - another git command holds the index (index.lock): nexus could commit
//     and move HEAD but not update the index, and the next plain `git
//     commit` would bring the file back;
//   - HEAD is detached: the commit would belong to no branch;
//   - a rebase, merge, cherry-pick, revert or bisect is under way: the
//     commit would land on the operation's HEAD and an abort would silently
//     restore the deleted files.
//
// Each refusal says how to proceed. The paths come from `git rev-parse
// --git-path`, which knows linked worktrees and relocated git folders.
func (m *Manager) checkRepoIdle(ctx context.Context, top string) error {
	names := []string{"index.lock", "rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "sequencer"}
	args := []string{"rev-parse"}
	for _, n := range names {
		args = append(args, "--git-path", n)
	}
	out, err := m.gitOut(ctx, top, nil, "", args...)
	if err != nil {
		return err
	}
	paths := strings.Split(out, "\n")
	if len(paths) != len(names) {
		return fmt.Errorf("git rev-parse --git-path: %d paths for %d names", len(paths), len(names))
	}
	exists := map[string]string{}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, p)
		}
		if _, err := os.Lstat(p); err == nil {
			exists[names[i]] = p
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("inspect %s: %w", p, err)
		}
	}
	const nothing = "nothing was deleted"
	if p, ok := exists["index.lock"]; ok {
		return refusef("git is busy: %s exists, so another git command is using the index; %s. Run the deletion again when it has finished (if no git command is running, one crashed: remove %s)", p, nothing, p)
	}
	switch {
	case exists["rebase-merge"] != "" || exists["rebase-apply"] != "":
		return refusef("a rebase is in progress in %s; %s. Finish it with `git rebase --continue` or abandon it with `git rebase --abort`, then run the deletion again", top, nothing)
	case exists["MERGE_HEAD"] != "":
		return refusef("a merge is in progress in %s; %s. Conclude it with `git commit` or abandon it with `git merge --abort`, then run the deletion again", top, nothing)
	case exists["CHERRY_PICK_HEAD"] != "":
		return refusef("a cherry-pick is in progress in %s; %s. Finish it with `git cherry-pick --continue` or abandon it with `git cherry-pick --abort`, then run the deletion again", top, nothing)
	case exists["REVERT_HEAD"] != "":
		return refusef("a revert is in progress in %s; %s. Finish it with `git revert --continue` or abandon it with `git revert --abort`, then run the deletion again", top, nothing)
	case exists["BISECT_LOG"] != "":
		return refusef("a bisect is in progress in %s; %s. End it with `git bisect reset`, then run the deletion again", top, nothing)
	case exists["sequencer"] != "":
		return refusef("a multi-commit cherry-pick or revert is in progress in %s; %s. Finish or abort it (`git cherry-pick --abort` / `git revert --abort`), then run the deletion again", top, nothing)
	}
	if _, err := m.gitOut(ctx, top, nil, "", "symbolic-ref", "-q", "HEAD"); err != nil {
		return refusef("HEAD is detached in %s, so a commit would belong to no branch; %s. Switch to a branch (`git switch <branch>`), then run the deletion again", top, nothing)
	}
	return nil
}

// signArgs returns the commit-tree options that honour the user's
// commit.gpgsign: git commit-tree does not read it (only `git commit`
// does), so nexus passes -S itself; git then signs with user.signingkey and
// gpg.format as `git commit` would, and a signing failure fails the commit
// before HEAD moves.
func (m *Manager) signArgs(ctx context.Context, top string) []string {
	v, err := m.gitOut(ctx, top, nil, "", "config", "--type=bool", "--get", "commit.gpgsign")
	if err == nil && v == "true" {
		return []string{"-S"}
	}
	return nil
}
