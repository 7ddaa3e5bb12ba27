package vocabulary

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// NodeModulesPath is where npm installs nexus-core inside a project.
const NodeModulesPath = "node_modules/@moreih29/nexus-core"

// Candidate is one place Locate looked.
type Candidate struct {
	Source string // e.g. "--core", "NEXUS_CORE_DIR", "config core.dir (file)", "node_modules"
	Path   string
}

// NotFoundError lists every place Locate looked.
type NotFoundError struct {
	Looked []Candidate
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("no nexus-core distribution found; looked in:\n")
	for _, c := range e.Looked {
		fmt.Fprintf(&b, "  - %s: %s\n", c.Source, c.Path)
	}
	b.WriteString("fix: pass --core DIR, set NEXUS_CORE_DIR, set core.dir in .nexus/nexus.yaml, or run `npm install @moreih29/nexus-core@0.10` in the project")
	return b.String()
}

// Locate finds the distribution. configured is the effective core.dir
// (already layered: flag > environment > config files) with a description
// of where it came from; when it is empty, Locate walks up from projectDir
// looking for node_modules/@moreih29/nexus-core.
func Locate(configured, source, projectDir string) (string, error) {
	var looked []Candidate
	if configured != "" {
		abs, err := filepath.Abs(configured)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", configured, err)
		}
		if isDistribution(abs) {
			return abs, nil
		}
		// An explicit setting that points nowhere is an error on its own:
		// silently falling back would hide the typo.
		return "", fmt.Errorf("nexus-core distribution set by %s is not usable: %s has no manifest.json or vocabulary/ (fix the path, or unset it to search node_modules)", source, abs)
	}
	looked = append(looked, Candidate{"--core flag", "(not given)"}, Candidate{"NEXUS_CORE_DIR", "(not set)"}, Candidate{"config core.dir", "(not set)"})
	if projectDir != "" {
		dir, _ := filepath.Abs(projectDir)
		for {
			cand := filepath.Join(dir, filepath.FromSlash(NodeModulesPath))
			looked = append(looked, Candidate{"node_modules", cand})
			if isDistribution(cand) {
				return cand, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", &NotFoundError{Looked: looked}
}

// isDistribution accepts anything that looks like a nexus-core package, so
// the version gate (not Locate) explains an unsupported one.
func isDistribution(dir string) bool {
	for _, marker := range []string{"manifest.json", "vocabulary", "package.json", "VERSION"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return true
		}
	}
	return false
}
