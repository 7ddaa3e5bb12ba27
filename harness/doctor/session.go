package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// DefaultStaleAfter is how long a cycle may sit without any session
// activity before the doctor calls it stale.
const DefaultStaleAfter = 12 * time.Hour

// Session looks for a planning cycle (plan.json / tasks.json) that no live
// session is working on, and for a tracker left by a session that ended
// without its SessionEnd.
//
// The heuristic, since no file records "a session is running":
//   - session_start creates this harness's agent-tracker.json and
//     session_end deletes it (with the tool log), so a tracker means a
//     session is open or ended uncleanly;
//   - activity is the newest modification time among plan.json, tasks.json,
//     our tracker and tool log (appended on every tool call), and the
//     folders of other harnesses' namespaces (a co-running harness working
//     on the shared plan changes its own files);
//   - an open cycle is stale when that activity is older than StaleAfter;
//     a tracker is left over when it is older than StaleAfter, noting how
//     many agents it still lists as running.
//
// Both are warnings: a cycle may be resumed days later on purpose, so
// nothing is closed or deleted automatically.
type Session struct {
	Layout     state.Layout
	StaleAfter time.Duration // 0: DefaultStaleAfter
	Now        func() time.Time
	// ToolRef names a tool as the user sees it (nx_task_close); nil: the
	// abstract name.
	ToolRef func(string) string
}

func (Session) Name() string { return "session" }

func (c Session) Run(context.Context) []Finding {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	after := c.StaleAfter
	if after <= 0 {
		after = DefaultStaleAfter
	}
	ref := c.ToolRef
	if ref == nil {
		ref = func(s string) string { return s }
	}
	l := c.Layout
	plan, tasks := modTime(l.PlanPath()), modTime(l.TasksPath())
	tracker := modTime(l.TrackerPath())
	var last time.Time
	for _, t := range []time.Time{plan, tasks, tracker, modTime(l.ToolLogPath())} {
		if t.After(last) {
			last = t
		}
	}
	_, changed := foreign(l)
	var foreignActive []string
	for name, t := range changed {
		if t.After(last) {
			last = t
		}
		if now().Sub(t) <= after {
			foreignActive = append(foreignActive, name)
		}
	}
	idle := now().Sub(last)

	var out []Finding
	if !plan.IsZero() || !tasks.IsZero() {
		what := cycleSummary(l)
		if idle > after {
			out = append(out, warn(fmt.Sprintf("%s open, but no session has touched .nexus/state for %s (over %s): probably left by a session that ended without closing its cycle",
				what, age(idle), age(after)),
				fmt.Sprintf("in a session, continue it ([run]) or archive it in history.json with %s; the doctor never closes a cycle itself", ref("task_close"))))
		} else {
			f := ok("%s open; last activity %s ago", what, age(idle))
			if len(foreignActive) > 0 {
				f.Message += " (other harnesses active recently: " + strings.Join(foreignActive, ", ") + ")"
			}
			out = append(out, f)
		}
	}
	if !tracker.IsZero() && now().Sub(tracker) > after && idle > after {
		running := 0
		if entries, _, err := state.New(l, nil).ReadTracker(); err == nil {
			for _, e := range entries {
				if e.Status == state.AgentRunning {
					running++
				}
			}
		}
		out = append(out, warn(fmt.Sprintf("%s was left by a session that ended without SessionEnd (unchanged for %s; %d agent(s) still marked running)",
			l.TrackerPath(), age(now().Sub(tracker)), running),
			"nothing to do: the next session start resets it; if sessions keep ending this way, check that the SessionEnd hook is installed (`nexus install claude`)"))
	}
	if len(out) == 0 {
		msg := "no open cycle"
		if !tracker.IsZero() {
			msg += fmt.Sprintf("; a session is open (tracker changed %s ago)", age(now().Sub(tracker)))
		}
		out = append(out, ok("%s", msg))
	}
	return out
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// cycleSummary describes the open cycle without failing on a bad file
// (the state check reports those).
func cycleSummary(l state.Layout) string {
	s := state.New(l, nil)
	var parts []string
	if p, ok, err := s.ReadPlan(); ok && err == nil {
		parts = append(parts, fmt.Sprintf("plan.json (#%d %q, %s)", p.ID, p.Topic, plural(len(p.Issues), "issue")))
	} else if ok {
		parts = append(parts, "plan.json")
	}
	if t, ok, err := s.ReadTasks(); ok && err == nil {
		open := 0
		for _, task := range t.Tasks {
			if task.Status != state.TaskCompleted {
				open++
			}
		}
		parts = append(parts, fmt.Sprintf("tasks.json (%s, %d not completed)", plural(len(t.Tasks), "task"), open))
	} else if ok {
		parts = append(parts, "tasks.json")
	}
	if len(parts) == 0 {
		return "a cycle is"
	}
	verb := " is"
	if len(parts) > 1 {
		verb = " are"
	}
	return strings.Join(parts, " and ") + verb
}
