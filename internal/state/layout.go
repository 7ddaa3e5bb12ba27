// Package state is nexus's one state store: it owns every path under
// .nexus/, the cross-process locks, atomic writes and the schema check that
// runs before anything is committed. Tools, lifecycle hooks and memory never
// open .nexus files for writing themselves.
package state

import (
	"fmt"
	"path/filepath"

	"github.com/nexus-harness/nexus/internal/harnessid"
)

// Layout names every path of the nexus-core .nexus/ tree for one project
// and one harness id.
type Layout struct {
	// Project is the project root (holding .nexus/ unless Nexus says otherwise).
	Project string
	// Nexus is the .nexus directory: <Project>/.nexus unless overridden
	// (--nexus-root, NEXUS_RUNTIME_ROOT).
	Nexus string
	// HarnessID is this harness's namespace under state/.
	HarnessID string
}

// NewLayout returns the layout for project with the default .nexus location.
// An empty harnessID means harnessid.Default.
func NewLayout(project, harnessID string) (Layout, error) {
	return NewLayoutAt(project, filepath.Join(project, ".nexus"), harnessID)
}

// NewLayoutAt returns a layout whose .nexus directory is nexusDir.
func NewLayoutAt(project, nexusDir, harnessID string) (Layout, error) {
	if harnessID == "" {
		harnessID = harnessid.Default
	}
	if err := harnessid.Check(harnessID); err != nil {
		return Layout{}, err
	}
	p, err := filepath.Abs(project)
	if err != nil {
		return Layout{}, fmt.Errorf("resolve project %s: %w", project, err)
	}
	n, err := filepath.Abs(nexusDir)
	if err != nil {
		return Layout{}, fmt.Errorf("resolve .nexus root %s: %w", nexusDir, err)
	}
	return Layout{Project: p, Nexus: n, HarnessID: harnessID}, nil
}

// Paths of the tree (nexus-core layout, digest §1).
func (l Layout) StateDir() string      { return filepath.Join(l.Nexus, "state") }
func (l Layout) PlanPath() string      { return filepath.Join(l.StateDir(), "plan.json") }
func (l Layout) TasksPath() string     { return filepath.Join(l.StateDir(), "tasks.json") }
func (l Layout) HistoryPath() string   { return filepath.Join(l.Nexus, "history.json") }
func (l Layout) ArtifactsDir() string  { return filepath.Join(l.StateDir(), "artifacts") }
func (l Layout) MemoryDir() string     { return filepath.Join(l.Nexus, "memory") }
func (l Layout) ContextDir() string    { return filepath.Join(l.Nexus, "context") }
func (l Layout) RulesDir() string      { return filepath.Join(l.Nexus, "rules") }
func (l Layout) PluginsDir() string    { return filepath.Join(l.Nexus, "plugins") }
func (l Layout) GitignorePath() string { return filepath.Join(l.Nexus, ".gitignore") }
func (l Layout) HarnessDir() string    { return filepath.Join(l.StateDir(), l.HarnessID) }
func (l Layout) TrackerPath() string   { return filepath.Join(l.HarnessDir(), "agent-tracker.json") }
func (l Layout) MemoryAccessPath() string {
	return filepath.Join(l.HarnessDir(), "memory-access.jsonl")
}

// ToolLogPath is the tool log. nexus-core 0.10 disagrees with itself about
// its place; the namespace rule forbids new harness files at the state root,
// so it lives in the harness namespace (digest §1.5).
func (l Layout) ToolLogPath() string     { return filepath.Join(l.HarnessDir(), "tool-log.jsonl") }
func (l Layout) EditTrackerPath() string { return filepath.Join(l.HarnessDir(), "edit-tracker.json") }
func (l Layout) ReopenTrackerPath() string {
	return filepath.Join(l.HarnessDir(), "reopen-tracker.json")
}
func (l Layout) LogPath() string { return filepath.Join(l.HarnessDir(), "nexus.log") }

// LegacyTrackerPath is the pre-0.7 tracker location, removed at session start.
func (l Layout) LegacyTrackerPath() string { return filepath.Join(l.StateDir(), "agent-tracker.json") }

// LockPath returns the sidecar lock guarding a state file. Locks of the
// common files (plan, tasks, history) sit in state/ next to plan.json, not in
// a harness namespace: a lock only excludes the processes that take it, so
// every harness sharing the files must find it at the same path. history.json
// is tracked by git, so its lock stays in the ignored state/ folder.
func (l Layout) LockPath(file string) string {
	if file == l.HistoryPath() {
		return filepath.Join(l.StateDir(), "history.json.lock")
	}
	return file + ".lock"
}

// GitignoreContent is written to .nexus/.gitignore when it is missing: the
// minimal compliant content (state/ is session-scoped and never committed).
const GitignoreContent = "state/\n"
