package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/state"
)

// Symlinks names every symlink under .nexus (and .nexus itself) that
// points out of its folder. A repository can ship symlinks: nexus refuses
// to write through one that leaves its folder (docs/security.md), and this
// check says which one it is before a write fails. The folder of a link is
// the shipped folder it sits in (memory/, rules/, context/, a plugin's
// folder, state/artifacts/), else the project (.nexus's anchor).
type Symlinks struct {
	Layout state.Layout
}

func (Symlinks) Name() string { return "symlinks" }

func (c Symlinks) Run(context.Context) []Finding {
	l := c.Layout
	anchor := l.Anchor()
	var out []Finding
	check := func(p string) {
		scope := c.scope(p)
		target, _ := os.Readlink(p)
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			resolved = target
			if !filepath.IsAbs(resolved) {
				resolved = filepath.Join(filepath.Dir(p), resolved)
			}
		}
		realScope := scope
		if r, err := filepath.EvalSymlinks(scope); err == nil && p != scope {
			realScope = r
		}
		if p == scope { // the folder itself is the link: it must stay in the anchor
			realScope = anchor
			if r, err := filepath.EvalSymlinks(anchor); err == nil {
				realScope = r
			}
		}
		switch {
		case !inside(realScope, resolved):
			out = append(out, fault(fmt.Sprintf("%s is a symlink to %s, outside %s: nexus refuses to write through it", p, target, displayScope(realScope, scope)),
				"replace the symlink with a real folder or file; to keep .nexus elsewhere, set runtime.root in your user configuration"))
		case filepath.IsAbs(target):
			out = append(out, warn(fmt.Sprintf("%s is a symlink with an absolute target (%s): nexus follows only relative symlinks, so writes through it are refused", p, target),
				"make the link relative, or replace it with a real folder or file"))
		}
	}
	if st, err := os.Lstat(l.Nexus); err != nil {
		return []Finding{ok("no %s yet", l.Nexus)}
	} else if st.Mode()&fs.ModeSymlink != 0 && anchor != l.Nexus {
		check(l.Nexus)
	}
	l.Walk(l.Nexus, func(p string, d fs.DirEntry, err error) error {
		var tm *safefile.TooManyError
		if errors.As(err, &tm) {
			out = append(out, warn("the symlink scan stopped early: "+tm.Error(),
				"a folder of .nexus/ this large or deep is unusual: look at what is in it"))
		}
		if err != nil {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && p != l.Nexus {
			check(p)
		}
		return nil
	})
	if len(out) == 0 {
		out = append(out, ok("no symlink under %s leads out of its folder", l.Nexus))
	}
	return out
}

// scope returns the folder a symlink at p must stay in.
func (c Symlinks) scope(p string) string {
	l := c.Layout
	for _, d := range []string{l.ArtifactsDir(), l.MemoryDir(), l.RulesDir(), l.ContextDir()} {
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return d
		}
	}
	if rest, ok := strings.CutPrefix(p, l.PluginsDir()+string(filepath.Separator)); ok {
		name, _, _ := strings.Cut(rest, string(filepath.Separator))
		return filepath.Join(l.PluginsDir(), name)
	}
	return l.Anchor()
}

func displayScope(real, scope string) string {
	if real == scope {
		return scope
	}
	return scope + " (" + real + ")"
}

// inside reports whether p is root or below it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
