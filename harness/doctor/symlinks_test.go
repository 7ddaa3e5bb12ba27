package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSymlinksNamesEveryLinkOutOfItsFolder(t *testing.T) {
	cases := []struct {
		name   string
		link   string // relative to the project
		target func(proj, out string) string
		status Status
	}{
		{"memory folder out", ".nexus/memory", func(_, out string) string { return out }, StatusError},
		{"rules file out", ".nexus/rules/r.md", func(_, out string) string { return filepath.Join(out, "f") }, StatusError},
		{"artifacts out, relative", ".nexus/state/artifacts", func(proj, out string) string {
			r, _ := filepath.Rel(filepath.Join(proj, ".nexus", "state"), out)
			return r
		}, StatusError},
		{"state out", ".nexus/state", func(_, out string) string { return out }, StatusError},
		{"plugin file out", ".nexus/plugins/p/bin", func(_, out string) string { return filepath.Join(out, "f") }, StatusError},
		{"memory file into rules", ".nexus/memory/m.md", func(_, _ string) string { return "../rules/x.md" }, StatusError},
		{"inside its folder", ".nexus/memory/m.md", func(_, _ string) string { return "other.md" }, StatusOK},
		{"state namespace inside the project", ".nexus/state/nexus", func(_, _ string) string { return "../../keep" }, StatusOK},
		{"absolute but inside", ".nexus/context/c.md", func(proj, _ string) string { return filepath.Join(proj, ".nexus", "context", "real.md") }, StatusWarn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := layout(t)
			out := t.TempDir()
			for _, d := range []string{"memory", "rules", "context", "state", "plugins/p"} {
				os.MkdirAll(filepath.Join(l.Nexus, d), 0o755)
			}
			os.MkdirAll(filepath.Join(l.Project, "keep"), 0o755)
			link := filepath.Join(l.Project, c.link)
			os.RemoveAll(link)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(c.target(l.Project, out), link); err != nil {
				t.Fatal(err)
			}
			fs := Symlinks{Layout: l}.Run(context.Background())
			if c.status == StatusOK {
				expect(t, fs, StatusOK, "no symlink")
				return
			}
			expect(t, fs, c.status, link)
			if c.status == StatusError && !strings.Contains(summary(fs), "outside") {
				t.Errorf("the finding does not say where the link leads:\n%s", summary(fs))
			}
		})
	}
}

// doctor --fix removes leftover temporary files only beneath the project:
// one seen through a symlinked state/ that leads out stays.
func TestFixNeverRemovesThroughALinkOut(t *testing.T) {
	l := layout(t)
	out := t.TempDir()
	os.MkdirAll(l.Nexus, 0o755)
	if err := os.Symlink(out, l.StateDir()); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(out, ".plan.json.tmp-123")
	os.WriteFile(victim, []byte("someone else's"), 0o644)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(victim, old, old)
	Run(context.Background(), []Check{Locks{Layout: l, Grace: time.Millisecond}}, true)
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("doctor --fix removed a file outside the project: %v", err)
	}
}
