package doctor

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// foreign lists the folders of .nexus/state/ that belong to other harnesses
// (every folder but this harness's namespace and artifacts/), with the time
// each folder itself last changed. Only the state folder is listed: nothing
// inside another harness's namespace is ever opened.
func foreign(l state.Layout) (names []string, changed map[string]time.Time) {
	entries, err := l.ReadDir(l.StateDir())
	if err != nil {
		return nil, nil
	}
	changed = map[string]time.Time{}
	artifacts := filepath.Base(l.ArtifactsDir())
	for _, e := range entries {
		if !e.IsDir() || e.Name() == l.HarnessID || e.Name() == artifacts {
			continue
		}
		names = append(names, e.Name())
		if info, err := e.Info(); err == nil {
			changed[e.Name()] = info.ModTime()
		}
	}
	sort.Strings(names)
	return names, changed
}

// Namespaces reports other harnesses sharing this .nexus/ (co-running
// harnesses) and the pre-0.7 tracker left at the root of state/.
type Namespaces struct {
	Layout state.Layout
	// Own are the namespaces of nexus's sessions with other hosts, by
	// harness id (the host's name as the value): nexus's own, not a
	// co-running harness.
	Own map[string]string
	Now func() time.Time
}

func (Namespaces) Name() string { return "namespaces" }

func (c Namespaces) Run(context.Context) []Finding {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	var out []Finding
	names, changed := foreign(c.Layout)
	var own []string
	for i := 0; i < len(names); i++ {
		if host, ok := c.Own[names[i]]; ok && names[i] != c.Layout.HarnessID {
			own = append(own, fmt.Sprintf("%s (nexus's sessions with --host %s)", names[i], host))
			names = append(names[:i], names[i+1:]...)
			i--
		}
	}
	if len(own) > 0 {
		out = append(out, ok("%s also holds %s: nexus keeps each host's sessions apart there, and they share plan.json, tasks.json and the project's knowledge with this one",
			c.Layout.StateDir(), strings.Join(own, ", ")))
	}
	if len(names) > 0 {
		var desc []string
		for _, n := range names {
			d := n
			if t, ok := changed[n]; ok {
				d += fmt.Sprintf(" (changed %s ago)", age(now().Sub(t)))
			}
			desc = append(desc, d)
		}
		out = append(out, warn(fmt.Sprintf("other harnesses share %s: %s; nexus never reads or writes their namespaces, but plan.json and tasks.json are common to all of them",
			c.Layout.StateDir(), strings.Join(desc, ", ")),
			"nothing to do if they run on purpose: run one planning cycle at a time across harnesses; if a harness is no longer used, delete its folder yourself"))
	}
	if legacy := c.Layout.LegacyTrackerPath(); state.Exists(legacy) {
		out = append(out, warn(legacy+" is a pre-0.7 tracker that no harness uses any more",
			"remove it (session start does the same)").repairedBy(func(context.Context) (string, error) {
			store := state.New(c.Layout, nil)
			removed, err := store.RemoveLegacyTracker()
			if err != nil || !removed {
				return "", err
			}
			return "removed " + legacy, nil
		}))
	}
	if len(out) == 0 {
		out = append(out, ok("no other harness namespace in %s (harness id %s)", c.Layout.StateDir(), c.Layout.HarnessID))
	}
	return out
}
