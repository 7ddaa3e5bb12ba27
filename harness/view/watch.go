package view

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
)

// The watch is bounded like every walk of .nexus/: folders this deep,
// entries in all, folders watched (each costs an inotify watch, of which
// a user has a limited number).
const (
	maxWatchDirs = 4096
)

// watcher turns file change notifications (inotify through fsnotify) on
// the .nexus folder, recursively, folders created later included, and on
// the decision store into section rebuilds: a burst of changes is
// coalesced (Options.Debounce) and each section it touched is rebuilt
// once.
type watcher struct {
	s       *Server
	fw      *fsnotify.Watcher
	nexus   string
	project string

	mu     sync.Mutex
	dirs   map[string]bool
	stores []string
	full   bool // maxWatchDirs reached (said once)
}

func newWatcher(s *Server) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{s: s, fw: fw, nexus: filepath.Clean(s.o.Layout.Nexus), project: filepath.Clean(s.o.Layout.Project), dirs: map[string]bool{}}
	// The folder holding .nexus, alone: it tells when .nexus (or the
	// project's .nauro pointer) appears.
	if err := w.add(filepath.Dir(w.nexus)); err != nil {
		fw.Close()
		return nil, err
	}
	if filepath.Dir(w.nexus) != w.project {
		w.add(w.project)
	}
	w.addTree(w.nexus)
	w.addTree(filepath.Join(w.project, ".nauro"))
	return w, nil
}

func (w *watcher) close() { w.fw.Close() }

func (w *watcher) add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] {
		return nil
	}
	if len(w.dirs) >= maxWatchDirs {
		if !w.full {
			w.full = true
			w.s.o.Log.Printf("watching %d folders already: changes in further folders (first: %s) show only on reload", maxWatchDirs, dir)
		}
		return nil
	}
	if err := w.fw.Add(dir); err != nil {
		return err
	}
	w.dirs[dir] = true
	return nil
}

// addTree watches dir and every folder beneath it (never through a
// symlink), within the state walk limits.
func (w *watcher) addTree(dir string) {
	entries := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return fs.SkipAll
			}
			return nil
		}
		entries++
		if entries > state.MaxWalkEntries {
			return fs.SkipAll
		}
		if !d.IsDir() {
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); strings.Count(rel, string(filepath.Separator)) >= state.MaxWalkDepth {
			return fs.SkipDir
		}
		if err := w.add(p); err != nil {
			w.s.o.Log.Printf("cannot watch %s: %v", p, err)
			return fs.SkipDir
		}
		return nil
	})
}

// watchDecisionStore adds the decision store's folder (once found).
func (s *Server) watchDecisionStore(root string) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		return
	}
	root = filepath.Clean(root)
	w.mu.Lock()
	known := false
	for _, r := range w.stores {
		known = known || r == root
	}
	if !known {
		w.stores = append(w.stores, root)
	}
	w.mu.Unlock()
	if !known {
		w.addTree(root)
	}
}

// nexusSections are the sections built from .nexus/.
var nexusSections = []string{secPlan, secTasks, secAgents, secHistory, secMemory}

// classify names the sections a change of path can affect.
func (w *watcher) classify(p string) []string {
	base := filepath.Base(p)
	if strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, ".rmwlock") {
		return nil
	}
	if rel, ok := under(w.nexus, p); ok {
		parts := strings.Split(filepath.ToSlash(rel), "/")
		switch {
		case rel == ".":
			return nexusSections
		case parts[0] == "history.json" && len(parts) == 1:
			return []string{secHistory, secMemory}
		case parts[0] == "memory":
			return []string{secMemory}
		case parts[0] != "state":
			return nil
		case len(parts) == 1:
			return nexusSections
		case len(parts) == 2 && parts[1] == "plan.json":
			return []string{secPlan}
		case len(parts) == 2 && parts[1] == "tasks.json":
			return []string{secTasks}
		case !harnessid.Valid(parts[1]):
			return nil
		case len(parts) == 2:
			return []string{secAgents, secMemory} // a namespace came or went
		case len(parts) == 3 && parts[2] == "agent-tracker.json":
			return []string{secAgents}
		case len(parts) == 3 && parts[2] == "memory-access.jsonl":
			return []string{secMemory}
		}
		return nil
	}
	if rel, ok := under(filepath.Join(w.project, ".nauro"), p); ok {
		_ = rel
		return []string{secDecisions}
	}
	w.mu.Lock()
	stores := w.stores
	w.mu.Unlock()
	for _, root := range stores {
		if rel, ok := under(root, p); ok {
			if first, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); first == "snapshots" {
				return nil
			}
			return []string{secDecisions}
		}
	}
	return nil
}

// under reports whether p is dir or beneath it, and p relative to dir.
func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
		return "", false
	}
	return rel, true
}

// run receives notifications until ctx ends, coalescing bursts.
func (w *watcher) run(ctx context.Context) {
	deb := w.s.o.Debounce
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	pending := map[string]bool{}
	var burst time.Time
	mark := func(names []string) {
		if len(names) == 0 {
			return
		}
		now := time.Now()
		if len(pending) == 0 {
			burst = now
		}
		for _, n := range names {
			pending[n] = true
		}
		// Quiet for deb, but never later than 4*deb after the burst began.
		timer.Reset(min(deb, burst.Add(4*deb).Sub(now)))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			names := w.classify(ev.Name)
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() && w.wanted(ev.Name) {
					// Files may have been written into it before the
					// watch: everything beneath it counts as changed.
					w.addTree(ev.Name)
					if _, ok := under(w.nexus, ev.Name); ok {
						names = append(names, nexusSections...)
					}
				}
			}
			mark(names)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: rebuild everything.
				mark(sectionNames)
				continue
			}
			w.s.o.Log.Printf("file change notification: %v", err)
		case <-timer.C:
			names := pending
			pending = map[string]bool{}
			w.s.dirty(ctx, names)
		}
	}
}

// wanted reports whether a new folder is one to watch: beneath .nexus,
// the project's .nauro, or a decision store.
func (w *watcher) wanted(dir string) bool {
	if _, ok := under(w.nexus, dir); ok {
		return true
	}
	if _, ok := under(filepath.Join(w.project, ".nauro"), dir); ok {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.stores {
		if _, ok := under(r, dir); ok {
			return true
		}
	}
	return false
}
