package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/yamljson"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Problem is a manifest that could not be used: invalid, unreadable, or
// shadowed by another plugin of the same name.
type Problem struct {
	Path string `json:"path"`
	// Plugin and Tool are set when the plugin is loaded but one of its
	// tools is refused (its name is reserved or taken).
	Plugin string `json:"plugin,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Err    error  `json:"-"`
}

func (p Problem) Error() string { return p.Err.Error() }

// DefaultUserDir is the user's plugin folder: $XDG_CONFIG_HOME/nexus/plugins,
// else ~/.config/nexus/plugins ("" when neither can be determined).
func DefaultUserDir() string { return userPath("XDG_CONFIG_HOME", ".config", "plugins") }

// userPath is $xdgVar/nexus/name when that variable holds an absolute path,
// else ~/home/nexus/name ("" when neither can be determined).
func userPath(xdgVar, home, name string) string {
	if x := os.Getenv(xdgVar); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "nexus", name)
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return ""
	}
	return filepath.Join(h, home, "nexus", name)
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
	return discoverWith(query{projectDir: projectDir, userDir: userDir, paths: paths, onlyEvent: onlyEvent, onlyTool: onlyTool})
}

// query says what discovery looks at and for.
type query struct {
	projectDir, userDir string
	paths               []string
	onlyEvent, onlyTool string
	// skip names plugins that are not loaded: disabled by configuration
	// (reason "") or taken by a built-in plugin (the reason is reported).
	skip map[string]string
}

// candidate is a manifest file in precedence order.
type candidate struct {
	file string
	src  Source
}

// candidates lists the manifest files discovery would read, in precedence
// order, without reading any of them.
func candidates(projectDir, userDir string, paths []string) ([]candidate, []Problem) {
	var out []candidate
	var problems []Problem
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
		out = append(out, candidate{p, SourceConfig})
	}
	if projectDir != "" {
		for _, f := range globManifests(ProjectPluginDir(projectDir), &problems) {
			out = append(out, candidate{f, SourceProject})
		}
	}
	if userDir != "" {
		for _, f := range globManifests(userDir, &problems) {
			out = append(out, candidate{f, SourceUser})
		}
	}
	return out, problems
}

func discoverWith(q query) ([]*Manifest, []Problem) {
	var found []*Manifest
	byName := map[string]*Manifest{}
	seen := map[string]string{} // names skipped by onlyEvent, for shadowing
	files, problems := candidates(q.projectDir, q.userDir, q.paths)
	skipped := func(name, file string) bool {
		reason, ok := q.skip[name]
		if ok && reason != "" {
			problems = append(problems, Problem{Path: file, Err: fmt.Errorf("plugin %q in %s %s", name, file, reason)})
		}
		return ok
	}
	for _, c := range files {
		if q.onlyEvent != "" || len(q.skip) > 0 {
			name, subscribed, ok := prescan(c.file, q.onlyEvent, q.onlyTool)
			if ok && skipped(name, c.file) {
				continue
			}
			if q.onlyEvent != "" {
				if ok && !subscribed {
					if _, dup := byName[name]; !dup && seen[name] == "" {
						seen[name] = c.file
					}
					continue
				}
				if ok && seen[name] != "" {
					continue // shadowed by an earlier plugin that does not subscribe
				}
			}
		}
		m, err := LoadManifest(c.file)
		if err != nil {
			problems = append(problems, Problem{Path: c.file, Err: err})
			continue
		}
		if _, ok := q.skip[m.Name]; ok {
			continue // prescan could not read the name, the full load could
		}
		m.Source = c.src
		if prev, ok := byName[m.Name]; ok {
			problems = append(problems, Problem{Path: c.file, Err: fmt.Errorf(
				"plugin %q in %s is shadowed by the plugin of the same name in %s (%s); rename one of them", m.Name, c.file, prev.Path, prev.Source)})
			continue
		}
		byName[m.Name] = m
		found = append(found, m)
	}
	return found, problems
}

// globManifests lists dir/*/nexus-plugin.yaml in name order. A missing
// folder is normal; an unreadable one is a problem.
func globManifests(dir string, problems *[]Problem) []string {
	entries, err := safefile.ReadDir(dir, maxPluginFolders)
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
	s := skim(file, event, toolName)
	return s.name, s.subscribed, s.ok
}

// skimmed is what skim learns from a manifest without validating it.
type skimmed struct {
	name       string
	subscribed bool
	timeout    time.Duration // of the subscription; 0 when unreadable
	ok         bool
}

func skim(file, event, toolName string) skimmed {
	data, err := readManifest(file)
	if err != nil {
		return skimmed{}
	}
	doc, err := yamljson.Decode(data)
	if err != nil {
		return skimmed{}
	}
	top, _ := doc.Value.(map[string]any)
	name, _ := top["name"].(string)
	if name == "" {
		return skimmed{}
	}
	events, _ := top["events"].(map[string]any)
	sub, subscribed := events[event].(map[string]any)
	if !subscribed {
		return skimmed{name: name, ok: true}
	}
	out := skimmed{name: name, subscribed: true, ok: true}
	if ts, ok := sub["timeout"].(string); ok {
		out.timeout, _ = time.ParseDuration(ts)
	}
	if toolName == "" || !isToolEvent(event) {
		return out
	}
	patterns, _ := sub["tools"].([]any)
	if len(patterns) == 0 {
		return out
	}
	var s Subscription
	for _, p := range patterns {
		if ps, ok := p.(string); ok {
			s.Tools = append(s.Tools, ps)
		}
	}
	out.subscribed = s.Matches(toolName)
	return out
}

// skipList is the names discovery leaves out: the disabled ones and those
// of built-in plugins (which win over a discovered plugin of the same name).
func (o Options) skipList() map[string]string {
	if len(o.Disabled) == 0 && len(o.Builtin) == 0 {
		return nil
	}
	skip := map[string]string{}
	for _, n := range o.Disabled {
		skip[n] = ""
	}
	for _, b := range o.Builtin {
		if b != nil {
			if _, disabled := skip[b.Name]; !disabled {
				skip[b.Name] = "is shadowed by nexus's built-in plugin of the same name; rename it"
			}
		}
	}
	return skip
}

// userDir resolves Options.UserDir ("" when user plugins are off).
func (o Options) userDir() string {
	if o.NoUserPlugins {
		return ""
	}
	if o.UserDir != "" {
		return o.UserDir
	}
	return DefaultUserDir()
}

// builtins returns the enabled built-in manifests.
func (o Options) builtins() []*Manifest {
	var out []*Manifest
	for _, b := range o.Builtin {
		if b != nil && !slices.Contains(o.Disabled, b.Name) {
			out = append(out, b)
		}
	}
	return out
}

// Subscribed names the plugins that may be subscribed to event for a call
// of toolName, reading nothing but each manifest's name and subscriptions
// (no validation, no schema, nothing started). A manifest it cannot skim is
// named too (by its path), so that the caller takes the full path, which
// reports it. budget is the sum of their timeouts (the longest a dispatch
// can take; a timeout that cannot be read counts as the maximum). No names
// means a hook needs no plugin at all.
func Subscribed(o Options, event, toolName string) (names []string, budget time.Duration) {
	for _, b := range o.builtins() {
		if s, ok := b.Events[event]; ok && (!isToolEvent(event) || s.Matches(toolName)) {
			names = append(names, b.Name)
			budget += time.Duration(s.Timeout)
		}
	}
	files, _ := candidates(o.ProjectDir, o.userDir(), o.Paths)
	skip := o.skipList()
	seen := map[string]bool{}
	for _, c := range files {
		s := skim(c.file, event, toolName)
		switch {
		case !s.ok:
			names = append(names, c.file)
			budget += maxTimeout
		case seen[s.name]:
		case s.subscribed:
			if _, skipped := skip[s.name]; !skipped {
				names = append(names, s.name)
				if s.timeout <= 0 || s.timeout > maxTimeout {
					s.timeout = maxTimeout
				}
				budget += s.timeout
			}
		}
		if s.ok {
			seen[s.name] = true
		}
	}
	return names, budget
}

func isToolEvent(event string) bool {
	return sdk.EventName(event) == sdk.EventPreToolUse || sdk.EventName(event) == sdk.EventPostToolUse
}

// LookupTool finds a declared tool by the name it is exposed under,
// without starting anything: built-in plugins first, then the one
// discovered plugin whose name the tool name starts with (<plugin>_), whose
// manifest alone is validated. The capability gate of a hook process uses
// it to learn a plugin tool's classes.
func LookupTool(o Options, exposed string) (ToolRef, bool) {
	for _, b := range o.builtins() {
		for _, t := range b.Tools {
			if b.exposedName(t.Name) == exposed {
				return toolRef(b, t, o.ToolTimeout), true
			}
		}
	}
	if _, reserved := o.reservedBy(exposed); reserved {
		return ToolRef{}, false // refused to any plugin (see Options.Reserved)
	}
	plugin, tool, ok := strings.Cut(exposed, "_")
	if !ok {
		return ToolRef{}, false
	}
	if _, skipped := o.skipList()[plugin]; skipped {
		return ToolRef{}, false
	}
	files, _ := candidates(o.ProjectDir, o.userDir(), o.Paths)
	for _, c := range files {
		name, _, ok := prescan(c.file, "", "")
		if ok && name != plugin {
			continue
		}
		m, err := LoadManifest(c.file)
		if err != nil || m.Name != plugin {
			if ok {
				return ToolRef{}, false // the plugin of that name is unusable
			}
			continue
		}
		for _, t := range m.Tools {
			if t.Name == tool {
				return toolRef(m, t, o.ToolTimeout), true
			}
		}
		return ToolRef{}, false // the first plugin of a name shadows the others
	}
	return ToolRef{}, false
}

// ManifestFiles lists the manifest files discovery would read, in
// precedence order, reading none of them (the hook server watches them).
func ManifestFiles(o Options) []string {
	files, _ := candidates(o.ProjectDir, o.userDir(), o.Paths)
	out := make([]string, len(files))
	for i, c := range files {
		out[i] = c.file
	}
	return out
}
