package memory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// RefusedError is a deletion nexus refused before changing anything.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refusef(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// DeletedFile is one file removed by a gc commit.
type DeletedFile struct {
	// File is the name inside .nexus/memory/; RepoPath the path from the
	// repository root.
	File     string `json:"file"`
	RepoPath string `json:"repo_path"`
	// Restore is the command that brings the file back (run at the
	// repository root).
	Restore string `json:"restore"`
}

// DeleteResult describes a gc commit.
type DeleteResult struct {
	Commit string        `json:"commit"`
	Parent string        `json:"parent"`
	Reason string        `json:"reason"`
	Files  []DeletedFile `json:"files"`
	// Skipped lists the files automatic gc left alone, with the reason.
	Skipped []string `json:"skipped,omitempty"`
	// Warnings are follow-up steps that failed after the commit was made
	// (the deletion itself stands).
	Warnings []string `json:"warnings,omitempty"`
}

// Summary renders the result for people.
func (r *DeleteResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Deleted %d memory file(s) in commit %s. Reason: %s.\n", len(r.Files), short(r.Commit), r.Reason)
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s — restore with: %s\n", f.RepoPath, f.Restore)
	}
	for _, sk := range r.Skipped {
		fmt.Fprintf(&b, "Kept: %s\n", sk)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// deleteFiles removes memory files in exactly one new commit on the
// current branch, leaving everything else of the user's repository as it
// was:
//
//  1. every file must be a regular file inside .nexus/memory/ (no
//     symlinks), committed in HEAD, with no staged, unstaged or untracked
//     change — otherwise nothing happens and a RefusedError says why;
//  2. the commit is built in a temporary index (GIT_INDEX_FILE): HEAD's
//     tree minus these paths (read-tree, update-index --force-remove,
//     write-tree, commit-tree), so the user's staged changes never enter it;
//  3. HEAD moves to it with a compare-and-swap update-ref (a concurrent
//     commit makes nexus stop instead of losing it);
//  4. the paths leave the user's index and working tree — nothing else of
//     either is touched — and their access records are dropped.
//
// git commit hooks do not run (no `git commit` is involved).
//
// With skipUnsafe (automatic gc), a file failing the checks of step 1 is
// left alone and listed in Skipped instead of stopping the whole run: an
// old memory extended by a recent, not yet committed `[m]` save must not
// block the forgetting of the others. Explicit deletions refuse outright.
func (m *Manager) deleteFiles(ctx context.Context, names []string, reason string, skipUnsafe bool) (*DeleteResult, error) {
	if len(names) == 0 {
		return nil, inputErrorf("name at least one memory file to delete")
	}
	lock, err := m.store.LockDir(ctx, "memory")
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	targets, skipped, err := m.collectTargets(names, skipUnsafe)
	if err != nil {
		return nil, err
	}
	top, head, err := m.openRepo(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.checkRepoIdle(ctx, top); err != nil {
		return nil, err
	}
	for i := range targets {
		real, err := filepath.EvalSymlinks(targets[i].abs)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", targets[i].abs, err)
		}
		rel, ok := inside(top, real)
		if !ok {
			return nil, refusef("%s is outside the git repository at %s", targets[i].abs, top)
		}
		targets[i].repo = filepath.ToSlash(rel)
	}
	problems, err := m.unsafeToDelete(ctx, top, targets)
	if err != nil {
		return nil, err
	}
	kept := targets[:0]
	for _, t := range targets {
		if pr, bad := problems[t.repo]; bad {
			if !skipUnsafe {
				return nil, &RefusedError{Reason: pr}
			}
			skipped = append(skipped, pr)
			continue
		}
		kept = append(kept, t)
	}
	targets = kept
	if len(targets) == 0 {
		return nil, &RefusedError{Reason: strings.Join(skipped, "; ")}
	}

	res := &DeleteResult{Parent: head, Reason: reason, Skipped: skipped}
	var paths []string
	for _, t := range targets {
		res.Files = append(res.Files, DeletedFile{File: t.file, RepoPath: t.repo})
		paths = append(paths, t.repo)
	}
	if res.Commit, err = m.commitDeletions(ctx, top, head, paths, commitMessage(res)); err != nil {
		return nil, err
	}
	for i := range res.Files {
		res.Files[i].Restore = "git checkout " + res.Commit + "^ -- " + shellQuote(res.Files[i].RepoPath)
	}

	// The commit stands; now bring the user's index and working tree in
	// line for exactly these paths.
	if err := m.removeFromIndex(ctx, top, paths); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("could not drop the deleted files from the git index (%v); run `git rm --cached -q -- %s`", err, strings.Join(quoteAll(paths), " ")))
	}
	var deleted []string
	for _, t := range targets {
		if err := m.store.RemoveContainedLocked(m.Dir(), t.file); err != nil {
			res.Warnings = append(res.Warnings, err.Error())
		}
		deleted = append(deleted, t.file)
	}
	if err := m.dropRecords(ctx, deleted); err != nil {
		res.Warnings = append(res.Warnings, "could not drop the access records of the deleted files: "+err.Error())
	}
	return res, nil
}

// gcTarget is one file to delete.
type gcTarget struct {
	file string // inside the memory directory, slash-separated
	abs  string // absolute path
	repo string // from the repository root, slash-separated
}

// collectTargets resolves the names to regular files inside the memory
// directory. A name that is not one refuses the request, or with
// skipUnsafe is listed in skipped.
func (m *Manager) collectTargets(names []string, skipUnsafe bool) (targets []gcTarget, skipped []string, err error) {
	dir := m.Dir()
	seen := map[string]bool{}
	for _, n := range names {
		rel, err := m.memoryName(n)
		if err != nil {
			return nil, nil, err
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		abs, err := state.ContainedPath(dir, filepath.FromSlash(rel))
		if err != nil {
			return nil, nil, refusef("%s: %v", n, err)
		}
		st, err := os.Lstat(abs)
		var problem string
		switch {
		case errors.Is(err, os.ErrNotExist):
			problem = fmt.Sprintf("%s: no such memory file in %s", n, dir)
		case err != nil:
			return nil, nil, fmt.Errorf("inspect %s: %w", abs, err)
		case st.Mode()&os.ModeSymlink != 0:
			problem = fmt.Sprintf("%s is a symlink; nexus deletes only regular files inside %s", n, dir)
		case !st.Mode().IsRegular():
			problem = fmt.Sprintf("%s is not a regular file", n)
		}
		if problem == "" {
			targets = append(targets, gcTarget{file: rel, abs: abs})
			continue
		}
		if !skipUnsafe {
			return nil, nil, &RefusedError{Reason: problem}
		}
		skipped = append(skipped, problem)
	}
	if len(targets) == 0 {
		return nil, nil, &RefusedError{Reason: strings.Join(skipped, "; ")}
	}
	return targets, skipped, nil
}

// openRepo returns the real path of the repository holding the memory
// directory and its HEAD commit, or a refusal.
func (m *Manager) openRepo(ctx context.Context) (top, head string, err error) {
	dir := m.Dir()
	out, err := m.gitOut(ctx, dir, nil, "", "rev-parse", "--show-toplevel")
	if err != nil {
		if errors.Is(err, errNoGit) {
			return "", "", refusef("git is required to delete memory files (every deletion is a git commit that can be undone) but %q was not found", m.git)
		}
		return "", "", refusef("%s is not inside a git repository; nexus deletes memory files only as git commits so they can be restored — put the project under git, or delete the files yourself", dir)
	}
	if top, err = filepath.EvalSymlinks(out); err != nil {
		return "", "", fmt.Errorf("resolve %s: %w", out, err)
	}
	head, err = m.gitOut(ctx, top, nil, "", "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return "", "", refusef("the repository at %s has no commits yet, so the files cannot have been committed; commit them first", top)
	}
	return top, head, nil
}

// literalPaths makes git take pathspecs as plain paths.
var literalPaths = []string{"GIT_LITERAL_PATHSPECS=1"}

// unsafeToDelete returns, by repository path, why a target cannot be
// deleted safely: not committed in HEAD as a regular file, or carrying a
// staged, unstaged or untracked change.
func (m *Manager) unsafeToDelete(ctx context.Context, top string, targets []gcTarget) (map[string]string, error) {
	var paths []string
	for _, t := range targets {
		paths = append(paths, t.repo)
	}
	tree, err := m.gitOut(ctx, top, literalPaths, "", append([]string{"ls-tree", "-z", "--full-tree", "HEAD", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	inHead := map[string]string{}
	for _, e := range strings.Split(tree, "\x00") {
		if meta, p, ok := strings.Cut(e, "\t"); ok {
			inHead[p] = strings.Fields(meta)[0]
		}
	}
	problems := map[string]string{}
	for _, p := range paths {
		switch mode, ok := inHead[p]; {
		case !ok:
			problems[p] = fmt.Sprintf("%s is not committed; nexus deletes only files a commit can restore — commit it first, or delete it yourself", p)
		case mode != "100644" && mode != "100755":
			problems[p] = fmt.Sprintf("%s is not a regular file in HEAD (mode %s)", p, mode)
		}
	}
	status, err := m.gitOut(ctx, top, append([]string{"GIT_OPTIONAL_LOCKS=0"}, literalPaths...), "",
		append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	entries := strings.Split(status, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		xy, p := e[:2], e[3:]
		if xy[0] == 'R' || xy[0] == 'C' {
			i++ // -z puts a rename's source in the next entry
		}
		if _, known := problems[p]; !known {
			problems[p] = fmt.Sprintf("%s has uncommitted changes (git status %q); commit or discard them first — nexus deletes only content a commit can restore", p, xy)
		}
	}
	return problems, nil
}

// commitDeletions makes the commit removing paths from head in a
// temporary index and moves HEAD to it (compare-and-swap).
func (m *Manager) commitDeletions(ctx context.Context, top, head string, paths []string, message string) (string, error) {
	tmp, err := os.MkdirTemp("", "nexus-memory-gc-")
	if err != nil {
		return "", fmt.Errorf("temporary index: %w", err)
	}
	defer os.RemoveAll(tmp)
	idx := append([]string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, literalPaths...)
	if _, err := m.gitOut(ctx, top, idx, "", "read-tree", head); err != nil {
		return "", err
	}
	if _, err := m.gitOut(ctx, top, idx, "", append([]string{"update-index", "--force-remove", "--"}, paths...)...); err != nil {
		return "", err
	}
	tree, err := m.gitOut(ctx, top, idx, "", "write-tree")
	if err != nil {
		return "", err
	}
	sign := m.signArgs(ctx, top)
	commit, err := m.gitOut(ctx, top, nil, message, append(append([]string{"commit-tree", tree, "-p", head}, sign...), "-F", "-")...)
	if err != nil {
		if len(sign) > 0 {
			return "", refusef("commit.gpgsign is true, and git could not sign the deletion commit, so nothing was deleted (nexus makes no unsigned commit where `git commit` would sign): %v", err)
		}
		return "", fmt.Errorf("%w (if git asks who you are, set user.name and user.email with git config)", err)
	}
	if _, err := m.gitOut(ctx, top, nil, "", "update-ref", "-m", "nexus memory gc", "HEAD", commit, head); err != nil {
		return "", fmt.Errorf("HEAD moved while nexus was deleting memory files; nothing was deleted (the unreferenced commit %s is left for git gc): %w", short(commit), err)
	}
	return commit, nil
}

// dropRecords removes the access records of deleted files (the log is
// left alone when it holds none of them).
func (m *Manager) dropRecords(ctx context.Context, files []string) error {
	drop := map[string]bool{}
	for _, f := range files {
		drop[filepath.Join(m.Dir(), filepath.FromSlash(f))] = true
	}
	recs, err := state.ReadMemoryAccess(m.store.L.MemoryAccessPath())
	if err != nil {
		return err
	}
	found := false
	for _, r := range recs {
		found = found || drop[filepath.Clean(r.Path)]
	}
	if !found {
		return nil
	}
	return m.store.UpdateMemoryAccess(ctx, func(recs []state.MemoryAccess) ([]state.MemoryAccess, error) {
		out := recs[:0]
		for _, r := range recs {
			if !drop[filepath.Clean(r.Path)] {
				out = append(out, r)
			}
		}
		return out, nil
	})
}

// removeFromIndex drops paths from the user's index, retrying while
// another git process holds index.lock.
func (m *Manager) removeFromIndex(ctx context.Context, top string, paths []string) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		_, err = m.gitOut(ctx, top, literalPaths, "", append([]string{"update-index", "--force-remove", "--"}, paths...)...)
		if err == nil || !strings.Contains(err.Error(), "index.lock") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// commitMessage lists every file with the command that restores it. The
// commit cannot name its own hash, so the commands use the parent's hash,
// which is what <commit>^ resolves to.
func commitMessage(r *DeleteResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory gc: delete %d memory file(s)\n\n", len(r.Files))
	fmt.Fprintf(&b, "Reason: %s.\n\n", r.Reason)
	b.WriteString("Deleted files, each with the command that restores it (run at the\nrepository root):\n\n")
	for _, f := range r.Files {
		fmt.Fprintf(&b, "%s\n    git checkout %s -- %s\n", f.RepoPath, r.Parent, shellQuote(f.RepoPath))
	}
	fmt.Fprintf(&b, "\n%s is this commit's parent: `git checkout <this commit>^ -- <path>`\nrestores the same content.\n", short(r.Parent))
	return b.String()
}

// memoryName turns a user's file argument into a slash path inside the
// memory directory: a bare name, ".nexus/memory/<name>" (relative to the
// project) or an absolute path inside the memory directory.
func (m *Manager) memoryName(n string) (string, error) {
	if n == "" {
		return "", inputErrorf("empty file name")
	}
	dir := m.Dir()
	p := filepath.FromSlash(n)
	if filepath.IsAbs(p) {
		rel, ok := inside(dir, filepath.Clean(p))
		if !ok {
			return "", refusef("%s is outside %s; nexus deletes only memory files", n, dir)
		}
		return filepath.ToSlash(rel), nil
	}
	if relDir, err := filepath.Rel(m.store.L.Project, dir); err == nil {
		if rest, ok := strings.CutPrefix(filepath.Clean(p), relDir+string(filepath.Separator)); ok {
			p = rest
		}
	}
	clean := filepath.Clean(p)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", refusef("%s is outside %s; nexus deletes only memory files", n, dir)
	}
	return filepath.ToSlash(clean), nil
}

// errNoGit is wrapped when the git binary cannot be run.
var errNoGit = errors.New("git cannot be run")

// gitOut runs git in dir and returns its trimmed standard output.
func (m *Manager) gitOut(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, m.git, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0"), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		var pe *fs.PathError
		if errors.Is(err, exec.ErrNotFound) || (errors.As(err, &pe) && pe.Op != "chdir") {
			// the git binary could not be started
			return "", fmt.Errorf("%w: %v", errNoGit, err)
		}
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// firstCommitScan is one `git log` over the memory directory, started
// early (it runs beside the directory walk) and read as it streams: git
// lists commits newest first, so the first commit seen adding a file is
// the one that added the file as it is now, and the scan stops — git is
// killed — as soon as every file asked about has been seen. Only
// .nexus/memory/ is asked about (a pathspec, relative names), so the cost
// follows the memory files' history, not the repository's.
type firstCommitScan struct {
	want   chan map[string]bool // the names to find; nil = none
	done   chan struct{}
	cancel context.CancelFunc
	found  map[string]time.Time
	err    error
}

// startFirstCommits starts the scan; call result with the names wanted.
func (m *Manager) startFirstCommits(ctx context.Context) *firstCommitScan {
	ctx, cancel := context.WithCancel(ctx)
	sc := &firstCommitScan{want: make(chan map[string]bool, 1), done: make(chan struct{}), cancel: cancel, found: map[string]time.Time{}}
	go func() {
		defer close(sc.done)
		sc.err = m.scanFirstCommits(ctx, sc)
	}()
	return sc
}

// result returns the commit times of the wanted names (slash-separated,
// relative to the memory directory) that git has seen added.
func (sc *firstCommitScan) result(want map[string]bool) (map[string]time.Time, error) {
	sc.want <- want
	if len(want) == 0 {
		sc.cancel()
	}
	<-sc.done
	sc.cancel()
	return sc.found, sc.err
}

func (m *Manager) scanFirstCommits(ctx context.Context, sc *firstCommitScan) error {
	dir := m.Dir()
	cmd := exec.CommandContext(ctx, m.git, "log", "--format=%x01%ct", "--name-only", "--diff-filter=A",
		"--no-renames", "--relative", "-z", "--", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git was not found")
	}
	r := bufio.NewReaderSize(out, 64<<10)
	var (
		want    map[string]bool
		got     bool // want has arrived
		missing int
		cur     time.Time
		stopped bool
	)
	for {
		if !got {
			select {
			case want = <-sc.want:
				got = true
				missing = 0
				for name := range want {
					if _, ok := sc.found[name]; !ok {
						missing++
					}
				}
			default:
			}
		}
		if got && missing == 0 {
			stopped = true
			break
		}
		tok, err := r.ReadString(0)
		if err != nil {
			break
		}
		tok = strings.TrimSuffix(tok, "\x00")
		if ts, ok := strings.CutPrefix(tok, "\x01"); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
			cur = time.Time{}
			if err == nil {
				cur = time.Unix(sec, 0)
			}
			continue
		}
		name := strings.TrimPrefix(tok, "\n")
		if name == "" || cur.IsZero() {
			continue
		}
		if _, seen := sc.found[name]; seen {
			continue // newest first: the add already seen is the file as it is now
		}
		sc.found[name] = cur
		if got && want[name] {
			missing--
		}
	}
	if stopped {
		sc.cancel()
		_ = cmd.Wait()
		return nil
	}
	if err := cmd.Wait(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("no git history for %s", dir)
	}
	return nil
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-+:@", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}
