package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/nexus-harness/nexus/internal/state"
)

// SessionsFile is the file, in the harness's namespace
// (.nexus/state/opencode/), where nexus keeps what it knows of OpenCode's
// sessions. OpenCode's tool hooks carry only a session id, so which role
// a call belongs to must be remembered from the session.created event that
// named the child session's agent; and a session start is derived from a
// root session's first message in an OpenCode process. The long-lived
// nexus child keeps this in memory too, but the one-process-per-hook
// fallback and a session resumed by another OpenCode process need it on
// disk. It is nexus's own file (not a nexus-core one): small, rewritten
// whole under its lock, never read by anything else.
const SessionsFile = "sessions.json"

// SessionsVersion is the version of SessionsFile's format.
const SessionsVersion = 1

// MaxSessions bounds the sessions remembered. Finished ones go first
// (completed subagents, roots whose OpenCode process ended), oldest first;
// a live one goes only when all of them are live (then a forgotten
// child's tool calls count as Lead's, and a forgotten root's next message
// starts it again).
const MaxSessions = 256

// Sessions is what nexus knows of OpenCode's sessions in one project.
type Sessions struct {
	Version int `json:"version"`
	// Seq numbers the sessions in the order nexus first saw them.
	Seq      uint64              `json:"seq"`
	Sessions map[string]*Session `json:"sessions"`
}

// Session is one OpenCode session.
type Session struct {
	Seq uint64 `json:"seq"`
	// Parent and Agent are set for a child session (a task's subagent):
	// the session that ran the task tool, and the agent it runs.
	Parent string `json:"parent,omitempty"`
	Agent  string `json:"agent,omitempty"`
	// PID is the OpenCode process a root session was last started in
	// (session_start sent); Ended is set once that process disposed.
	PID   int  `json:"pid,omitempty"`
	Ended bool `json:"ended,omitempty"`
	// Spawned and Done follow a child session's subagent: spawn sent, and
	// completion seen since.
	Spawned bool `json:"spawned,omitempty"`
	Done    bool `json:"done,omitempty"`
}

// live reports whether a session may still send hooks that need its
// record: a subagent not completed, a root started and not ended.
func (s *Session) live() bool {
	if s.Child() {
		return !s.Done
	}
	return s.PID != 0 && !s.Ended
}

// Child reports whether the session is a task's subagent.
func (s *Session) Child() bool { return s != nil && s.Parent != "" }

// NewSessions returns an empty record.
func NewSessions() *Sessions {
	return &Sessions{Version: SessionsVersion, Sessions: map[string]*Session{}}
}

// Get returns a session (nil when unknown).
func (s *Sessions) Get(id string) *Session { return s.Sessions[id] }

// Put records a session, numbering it when it is new, and forgets the
// oldest beyond MaxSessions.
func (s *Sessions) Put(id string, v *Session) {
	if s.Sessions == nil {
		s.Sessions = map[string]*Session{}
	}
	if old, ok := s.Sessions[id]; ok {
		v.Seq = old.Seq
	} else {
		s.Seq++
		v.Seq = s.Seq
	}
	s.Sessions[id] = v
	if len(s.Sessions) <= MaxSessions {
		return
	}
	ids := make([]string, 0, len(s.Sessions))
	for k := range s.Sessions {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := s.Sessions[ids[i]], s.Sessions[ids[j]]
		if a.live() != b.live() {
			return !a.live()
		}
		return a.Seq < b.Seq
	})
	for _, k := range ids[:len(ids)-MaxSessions] {
		delete(s.Sessions, k)
	}
}

// Root returns the root session above a session (itself for a root),
// following at most a few parents.
func (s *Sessions) Root(id string) string {
	for range 8 {
		v := s.Sessions[id]
		if !v.Child() {
			return id
		}
		id = v.Parent
	}
	return id
}

// Clone returns a deep copy.
func (s *Sessions) Clone() *Sessions {
	c := &Sessions{Version: s.Version, Seq: s.Seq, Sessions: make(map[string]*Session, len(s.Sessions))}
	for k, v := range s.Sessions {
		vv := *v
		c.Sessions[k] = &vv
	}
	return c
}

// DecodeSessions reads SessionsFile's content; an empty file is an empty
// record.
func DecodeSessions(b []byte) (*Sessions, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return NewSessions(), nil
	}
	var s Sessions
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", SessionsFile, err)
	}
	if s.Version != SessionsVersion {
		return nil, fmt.Errorf("%s: version %d, this nexus reads %d", SessionsFile, s.Version, SessionsVersion)
	}
	if s.Sessions == nil {
		s.Sessions = map[string]*Session{}
	}
	for k, v := range s.Sessions {
		if v == nil {
			delete(s.Sessions, k)
		}
	}
	return &s, nil
}

// Encode renders the record as SessionsFile's content.
func (s *Sessions) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SessionStore keeps the record between processes.
type SessionStore interface {
	// Load returns the current record (an empty one when there is none).
	Load(ctx context.Context) (*Sessions, error)
	// Update changes the record under the store's lock: fn gets the
	// current record and changes it in place; nothing is written when fn
	// fails. It returns the record written.
	Update(ctx context.Context, fn func(*Sessions) error) (*Sessions, error)
}

// MemoryStore keeps the record in memory only (one process; tests).
type MemoryStore struct {
	mu sync.Mutex
	s  *Sessions
}

// Load implements SessionStore.
func (m *MemoryStore) Load(context.Context) (*Sessions, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s == nil {
		return NewSessions(), nil
	}
	return m.s.Clone(), nil
}

// Update implements SessionStore.
func (m *MemoryStore) Update(_ context.Context, fn func(*Sessions) error) (*Sessions, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := NewSessions()
	if m.s != nil {
		cur = m.s.Clone()
	}
	if err := fn(cur); err != nil {
		return nil, err
	}
	m.s = cur
	return cur.Clone(), nil
}

// StateStore keeps the record in SessionsFile through the state store:
// read beneath the .nexus root within its size limit, rewritten atomically
// under its lock.
type StateStore struct {
	S *state.Store
}

// Path is SessionsFile's path.
func (st StateStore) Path() string { return filepath.Join(st.S.L.HarnessDir(), SessionsFile) }

// Load implements SessionStore. A record that cannot be read counts as
// empty (and is replaced by the next update): it only remembers sessions.
func (st StateStore) Load(context.Context) (*Sessions, error) {
	b, err := st.S.L.ReadFile(st.Path(), state.MaxRecordBytes)
	if errors.Is(err, os.ErrNotExist) {
		return NewSessions(), nil
	}
	if err != nil {
		return nil, err
	}
	s, err := DecodeSessions(b)
	if err != nil {
		return NewSessions(), nil
	}
	return s, nil
}

// Update implements SessionStore.
func (st StateStore) Update(ctx context.Context, fn func(*Sessions) error) (*Sessions, error) {
	if _, err := os.Stat(st.S.L.HarnessDir()); errors.Is(err, os.ErrNotExist) {
		if _, err := st.S.EnsureTree(); err != nil {
			return nil, err
		}
	}
	p := st.Path()
	var out *Sessions
	err := st.S.Update(ctx, []string{p}, func(tx *state.Tx) error {
		cur, err := st.Load(ctx)
		if err != nil {
			return err
		}
		if err := fn(cur); err != nil {
			return err
		}
		b, err := cur.Encode()
		if err != nil {
			return err
		}
		tx.PutRaw(p, b)
		out = cur
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", p, err)
	}
	return out, nil
}
