package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/nexus-harness/nexus/internal/yamljson"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Problem is a manifest that could not be used: invalid, unreadable, or
// shadowed by another plugin of the same name.
type Problem struct {
	Path string `json:"path"`
	Err  error  `json:"-"`
}

func (p Problem) Error() string { return p.Err.Error() }

// DefaultUserDir is the user's plugin folder: $XDG_CONFIG_HOME/nexus/plugins,
// else ~/.config/nexus/plugins ("" when neither can be determined).
func DefaultUserDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "nexus", "plugins")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "nexus", "plugins")
}

// ProjectPluginDir is where a project keeps its plugins.
func ProjectPluginDir(projectDir string) string {
	return filepath.Join(projectDir, ".nexus", "plugins")
}

// Discover finds and loads manifests, in precedence order: explicit paths
// (from configuration; a manifest file or a folder holding one, relative
// paths taken from projectDir), then <projectDir>/.nexus/plugins/*/, then
// userDir/*/ (pass "" to skip a location). A name found again later is
// reported as shadowed. Only small YAML files are read; nothing is started.
func Discover(projectDir, userDir string, paths []string) ([]*Manifest, []Problem) {
	return discover(projectDir, userDir, paths, "", "")
}

// discover is Discover; with onlyEvent set it keeps just the plugins
// subscribed to that event (and, for tool events with onlyTool set, to that
// tool), and only those are validated (the schema is compiled only when one
// exists), so a hook process pays nothing for the others, not even for
// their mistakes.
func discover(projectDir, userDir string, paths []string, onlyEvent, onlyTool string) ([]*Manifest, []Problem) {
	var found []*Manifest
	var problems []Problem
	byName := map[string]*Manifest{}
	seen := map[string]string{} // names skipped by onlyEvent, for shadowing
	add := func(file string, src Source) {
		if onlyEvent != "" {
			name, subscribed, ok := prescan(file, onlyEvent, onlyTool)
			if ok && !subscribed {
				if _, dup := byName[name]; !dup && seen[name] == "" {
					seen[name] = file
				}
				return
			}
			if ok && seen[name] != "" {
				return // shadowed by an earlier plugin that does not subscribe
			}
		}
		m, err := LoadManifest(file)
		if err != nil {
			problems = append(problems, Problem{Path: file, Err: err})
			return
		}
		m.Source = src
		if prev, ok := byName[m.Name]; ok {
			problems = append(problems, Problem{Path: file, Err: fmt.Errorf(
				"plugin %q in %s is shadowed by the plugin of the same name in %s (%s); rename one of them", m.Name, file, prev.Path, prev.Source)})
			return
		}
		byName[m.Name] = m
		found = append(found, m)
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) && projectDir != "" {
			p = filepath.Join(projectDir, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			problems = append(problems, Problem{Path: p, Err: fmt.Errorf("plugin path from configuration: %w", err)})
			continue
		}
		if st.IsDir() {
			p = filepath.Join(p, ManifestFile)
		}
		add(p, SourceConfig)
	}
	if projectDir != "" {
		for _, f := range globManifests(ProjectPluginDir(projectDir), &problems) {
			add(f, SourceProject)
		}
	}
	if userDir != "" {
		for _, f := range globManifests(userDir, &problems) {
			add(f, SourceUser)
		}
	}
	return found, problems
}

// globManifests lists dir/*/nexus-plugin.yaml in name order. A missing
// folder is normal; an unreadable one is a problem.
func globManifests(dir string, problems *[]Problem) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			*problems = append(*problems, Problem{Path: dir, Err: fmt.Errorf("list plugins: %w", err)})
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		f := filepath.Join(dir, e.Name(), ManifestFile)
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// prescan reads a manifest's name and whether it subscribes to event (for
// toolName, when set), without validating it. ok is false when the file
// cannot be read that far: it is then loaded fully, so its error is
// reported.
func prescan(file, event, toolName string) (name string, subscribed, ok bool) {
	data, err := os.ReadFile(file)
	if err != nil || len(data) > maxManifestSize {
		return "", false, false
	}
	doc, err := yamljson.Decode(data)
	if err != nil {
		return "", false, false
	}
	top, _ := doc.Value.(map[string]any)
	name, _ = top["name"].(string)
	if name == "" {
		return "", false, false
	}
	events, _ := top["events"].(map[string]any)
	sub, subscribed := events[event].(map[string]any)
	if !subscribed {
		return name, false, true
	}
	if toolName == "" || (event != sdk.EventPreToolUse && event != sdk.EventPostToolUse) {
		return name, true, true
	}
	patterns, _ := sub["tools"].([]any)
	if len(patterns) == 0 {
		return name, true, true
	}
	var s Subscription
	for _, p := range patterns {
		if ps, ok := p.(string); ok {
			s.Tools = append(s.Tools, ps)
		}
	}
	return name, s.Matches(toolName), true
}
