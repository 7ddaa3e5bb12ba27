package state

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// Branch returns the git branch checked out in the repository holding dir,
// read from .git/HEAD (no git binary needed). It never returns "": outside a
// repository it returns "unknown", on a detached HEAD "HEAD".
func Branch(dir string) string {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return "unknown"
	}
	// By path (a worktree's git folder is elsewhere), but bounded and
	// never a FIFO or a device.
	head, err := safefile.ReadFile(filepath.Join(gitDir, "HEAD"), MaxGitFileBytes)
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		name := strings.TrimPrefix(ref, "refs/heads/")
		if name != "" {
			return name
		}
	}
	return "HEAD"
}

// findGitDir walks up from dir to the first .git (a directory, or a file
// "gitdir: <path>" as in worktrees and submodules).
func findGitDir(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				return p
			}
			if b, err := safefile.ReadFile(p, MaxGitFileBytes); err == nil {
				if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					return g
				}
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
