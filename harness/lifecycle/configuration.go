package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ConfigNotice is what a session is told of the configuration's problems.
// nexus goes on with everything that loads (a key with a problem keeps its
// default, a file that cannot be parsed is left out), so a typo never
// switches nexus off; and it is never silent either: the problems reach
// the user in the host's message on session start and on the first event
// after they change (a new Identity), and Lead in the session's first
// context, so it can tell the user.
type ConfigNotice struct {
	// Problems are one line each: where, what, and what nexus does
	// instead.
	Problems []string
	// Identity changes whenever the problems may have: the configuration
	// files' identities and the problems' text. Each identity is shown
	// once outside session start.
	Identity string
}

// configShownPath remembers, in the harness's namespace, the identity of
// the configuration problems last shown to the user.
func (e *Engine) configShownPath() string {
	return filepath.Join(e.o.Store.L.HarnessDir(), "config-notice.json")
}

type configShown struct {
	Identity string `json:"identity"`
	ShownAt  string `json:"shown_at"`
}

// configText is the problems as one paragraph.
func (e *Engine) configText() string {
	p := e.o.Config.Problems
	what := "1 configuration problem"
	if len(p) > 1 {
		what = fmt.Sprintf("%d configuration problems", len(p))
	}
	return fmt.Sprintf("%s: %s. nexus goes on with the rest of its configuration; `nexus doctor` lists every problem with its fix.",
		what, strings.Join(p, " | "))
}

// configWarning is the session start's warning about the configuration
// ("" when it has no problem); the identity shown is recorded.
func (e *Engine) configWarning(ctx context.Context) string {
	if len(e.o.Config.Problems) == 0 {
		return ""
	}
	e.recordConfigShown(ctx)
	return e.configText()
}

// configNotice adds the configuration's problems to the reply of the first
// event after they changed.
func (e *Engine) configNotice(ctx context.Context, ev Event, r Reply) Reply {
	if len(e.o.Config.Problems) == 0 {
		return r
	}
	var shown configShown
	if b, err := e.o.Store.L.ReadFile(e.configShownPath(), 4096); err == nil && json.Unmarshal(b, &shown) == nil && shown.Identity == e.o.Config.Identity {
		return r
	}
	text := e.configText()
	e.log.Log(ctx, "warn", ev.Name, ev.AgentID, text)
	e.recordConfigShown(ctx)
	if r.Notice == "" {
		r.Notice = "nexus: " + text
	} else {
		r.Notice = "nexus: " + text + " " + r.Notice
	}
	return r
}

func (e *Engine) recordConfigShown(ctx context.Context) {
	if err := e.writeRecord(ctx, e.configShownPath(), configShown{Identity: e.o.Config.Identity, ShownAt: e.o.Store.Timestamp()}); err != nil {
		e.log.Log(ctx, "warn", "", "", "could not record the configuration notice: "+err.Error())
	}
}
