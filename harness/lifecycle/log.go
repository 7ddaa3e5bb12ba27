package lifecycle

import (
	"context"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// Log levels of nexus.log (config log.level).
var levels = map[string]int{"debug": 0, "info": 1, "warn": 2, "error": 3}

// LogLine is one line of .nexus/state/<harness-id>/nexus.log.
type LogLine struct {
	TS      string `json:"ts"`
	Level   string `json:"level"`
	Event   string `json:"event,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	Msg     string `json:"msg"`
}

// Logger appends to nexus.log through the state store.
type Logger struct {
	Store *state.Store
	Min   string // lowest level written; "" = info
	Now   func() time.Time
}

// Log writes one line when level is at or above the minimum. Logging never
// fails the caller: a log that cannot be written is not worth a hook.
func (l *Logger) Log(ctx context.Context, level, event, agentID, msg string) {
	l.LogAll(ctx, level, event, agentID, msg)
}

// LogAll writes one line per message in one append (one fsync).
func (l *Logger) LogAll(ctx context.Context, level, event, agentID string, msgs ...string) {
	if l == nil || l.Store == nil || len(msgs) == 0 {
		return
	}
	min := l.Min
	if min == "" {
		min = "info"
	}
	if levels[level] < levels[min] {
		return
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	ts := state.Format(now())
	lines := make([]any, len(msgs))
	for i, msg := range msgs {
		lines[i] = LogLine{TS: ts, Level: level, Event: event, AgentID: agentID, Msg: msg}
	}
	_ = l.Store.AppendLines(ctx, l.Store.L.LogPath(), lines)
}
