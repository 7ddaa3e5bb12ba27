package vocabulary

import (
	"fmt"
	"os"
	"path/filepath"
)

// NodeModulesPath is where npm installs nexus-core inside a project.
const NodeModulesPath = "node_modules/@moreih29/nexus-core"

// Locate finds the distribution. configured is the effective core.dir
// (already layered: flag > environment > config files) and source describes
// where it came from; when it is empty, Locate walks up from projectDir
// looking for node_modules/@moreih29/nexus-core, and without one it is the
// distribution built into nexus (Builtin). The version gate is applied
// later, by whoever opens the distribution, to all of them alike.
func Locate(configured, source, projectDir string) (Dist, error) {
	if configured != "" {
		abs, err := filepath.Abs(configured)
		if err != nil {
			return Dist{}, fmt.Errorf("resolve %s: %w", configured, err)
		}
		if isDistribution(abs) {
			return DirDist(abs, source), nil
		}
		// An explicit setting that points nowhere is an error on its own:
		// silently falling back would hide the typo.
		return Dist{}, fmt.Errorf("nexus-core distribution set by %s is not usable: %s has no manifest.json or vocabulary/ (fix the path, or unset it to use node_modules or the nexus-core %s built into nexus)", source, abs, BuiltinVersion)
	}
	if projectDir != "" {
		dir, _ := filepath.Abs(projectDir)
		for {
			cand := filepath.Join(dir, filepath.FromSlash(NodeModulesPath))
			if isDistribution(cand) {
				return DirDist(cand, "node_modules"), nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return Builtin(), nil
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
