package harness

import (
	"os"
	"path/filepath"
)

// FindProject is the project a folder belongs to: the nearest folder at or
// above dir holding .nexus/ or .git; without one, dir itself.
func FindProject(dir string) string {
	for d := dir; ; {
		for _, marker := range []string{".nexus", ".git"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// EventProject is the project of a host event's working directory:
// FindProject of dir when dir is an absolute path to a folder, else ""
// (the event does not say).
func EventProject(dir string) string {
	if dir == "" || !filepath.IsAbs(dir) || !isDir(dir) {
		return ""
	}
	return FindProject(dir)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
