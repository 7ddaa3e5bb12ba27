package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/state"
)

// The three tracker operations below are what nexus-core's lifecycle
// fixtures (agent_spawn, agent_complete, agent_resume) exercise; the host
// events reach the same functions through Engine.Handle. Each runs as one
// locked transaction on .nexus/state/<harness-id>/agent-tracker.json and
// checks the result against agent-tracker.schema.json before committing.

// SpawnParams are agent_spawn's parameters.
type SpawnParams struct {
	HarnessID string `json:"harness_id"` // must be the store's harness id when given
	AgentName string `json:"agent_name"` // host agent type or bare role
	AgentID   string `json:"agent_id"`
}

// CompleteParams are agent_complete's parameters.
type CompleteParams struct {
	AgentID     string  `json:"agent_id"`
	LastMessage *string `json:"last_message"`
	// FilesTouched nil means: compute it from the tool log.
	FilesTouched []string `json:"files_touched"`
}

// ResumeParams are agent_resume's parameters.
type ResumeParams struct {
	AgentID string `json:"agent_id"`
}

// ErrNotTracked is returned when no tracker entry has the agent id.
var ErrNotTracked = errors.New("agent is not in agent-tracker.json")

// AgentSpawn appends a running entry for a new agent instance (the tracker
// is created when missing).
func AgentSpawn(ctx context.Context, s *state.Store, p SpawnParams) (state.TrackerEntry, error) {
	e, err := spawnEntry(s, p)
	if err != nil {
		return e, err
	}
	err = s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
		entries, _, err := tx.Tracker()
		if err != nil {
			return err
		}
		return tx.PutTracker(append(entries, e))
	})
	return e, err
}

func spawnEntry(s *state.Store, p SpawnParams) (state.TrackerEntry, error) {
	if p.AgentID == "" {
		return state.TrackerEntry{}, &FieldError{Event: FixtureSpawn, Field: "agent_id", Msg: "is required"}
	}
	if p.HarnessID != "" && p.HarnessID != s.L.HarnessID {
		return state.TrackerEntry{}, fmt.Errorf("agent_spawn: harness_id %q does not match this harness's namespace %q", p.HarnessID, s.L.HarnessID)
	}
	return state.TrackerEntry{
		HarnessID:   s.L.HarnessID,
		AgentName:   BareRole(p.AgentName),
		AgentID:     p.AgentID,
		StartedAt:   s.Timestamp(),
		ResumeCount: state.Ptr[int64](0),
		Status:      state.AgentRunning,
	}, nil
}

// lastIndex returns the most recent entry with the agent id, or -1.
func lastIndex(entries []state.TrackerEntry, agentID string) int {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].AgentID == agentID {
			return i
		}
	}
	return -1
}

// AgentComplete marks the agent's most recent entry completed with
// stopped_at, last_message (when given) and files_touched (given, or
// computed from the tool log).
func AgentComplete(ctx context.Context, s *state.Store, p CompleteParams) (state.TrackerEntry, error) {
	if p.AgentID == "" {
		return state.TrackerEntry{}, &FieldError{Event: FixtureComplete, Field: "agent_id", Msg: "is required"}
	}
	files := p.FilesTouched
	if files == nil {
		var err error
		if files, err = FilesTouched(s, p.AgentID); err != nil {
			return state.TrackerEntry{}, err
		}
	}
	return updateLatest(ctx, s, "agent_complete", p.AgentID, func(e *state.TrackerEntry) {
		completeEntry(e, s.Timestamp(), p.LastMessage, files)
	})
}

// updateLatest applies change to the agent's most recent tracker entry in
// one locked transaction and returns the entry as written. op names the
// operation in the error for an agent that is not tracked.
func updateLatest(ctx context.Context, s *state.Store, op, agentID string, change func(*state.TrackerEntry)) (state.TrackerEntry, error) {
	var out state.TrackerEntry
	err := s.Update(ctx, []string{s.L.TrackerPath()}, func(tx *state.Tx) error {
		entries, _, err := tx.Tracker()
		if err != nil {
			return err
		}
		i := lastIndex(entries, agentID)
		if i < 0 {
			return fmt.Errorf("%s: agent %q: %w", op, agentID, ErrNotTracked)
		}
		change(&entries[i])
		out = entries[i]
		return tx.PutTracker(entries)
	})
	return out, err
}

func completeEntry(e *state.TrackerEntry, now string, last *string, files []string) {
	e.Status = state.AgentCompleted
	e.StoppedAt = now
	if last != nil {
		e.LastMessage = last
	}
	e.FilesTouched = append([]string{}, files...)
}

// AgentResume sets the agent's most recent entry running again, counting
// the resume and stamping last_resumed_at.
func AgentResume(ctx context.Context, s *state.Store, p ResumeParams) (state.TrackerEntry, error) {
	if p.AgentID == "" {
		return state.TrackerEntry{}, &FieldError{Event: FixtureResume, Field: "agent_id", Msg: "is required"}
	}
	return updateLatest(ctx, s, "agent_resume", p.AgentID, func(e *state.TrackerEntry) {
		resumeEntry(e, s.Timestamp())
	})
}

func resumeEntry(e *state.TrackerEntry, now string) {
	var n int64
	if e.ResumeCount != nil {
		n = *e.ResumeCount
	}
	e.ResumeCount = state.Ptr(n + 1)
	e.Status = state.AgentRunning
	e.LastResumedAt = now
}

// FixtureEvent runs a conformance lifecycle fixture event (agent_spawn,
// agent_complete, agent_resume) with its params as decoded JSON, on the
// engine's tracker, through the handlers the host events reach. Params are
// checked strictly: an unknown or mistyped field is an error; an event for
// an agent the tracker does not know is ErrNotTracked.
func (e *Engine) FixtureEvent(ctx context.Context, typ string, params map[string]any) error {
	if e.o.Store == nil {
		return errors.New("lifecycle engine has no state store")
	}
	return fixtureEvent(ctx, e.o.Store, typ, params)
}

func fixtureEvent(ctx context.Context, s *state.Store, typ string, params map[string]any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s params: %w", typ, err)
	}
	decode := func(v any) error {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("%s params: %w", typ, err)
		}
		return nil
	}
	switch typ {
	case FixtureSpawn:
		var p SpawnParams
		if err := decode(&p); err != nil {
			return err
		}
		_, err = AgentSpawn(ctx, s, p)
	case FixtureComplete:
		var p CompleteParams
		if err := decode(&p); err != nil {
			return err
		}
		_, err = AgentComplete(ctx, s, p)
	case FixtureResume:
		var p ResumeParams
		if err := decode(&p); err != nil {
			return err
		}
		_, err = AgentResume(ctx, s, p)
	default:
		return fmt.Errorf("unknown lifecycle fixture event %q (known: agent_spawn, agent_complete, agent_resume)", typ)
	}
	return err
}

// ToolLogLine is one line of the tool log (.nexus/state/<harness-id>/
// tool-log.jsonl). Its first fields are state.ToolLogLine's; Files and
// Writes add what files_touched needs.
type ToolLogLine struct {
	TS      string `json:"ts"`
	AgentID string `json:"agent_id,omitempty"` // empty for Lead
	Agent   string `json:"agent,omitempty"`    // bare role, when known
	Tool    string `json:"tool"`
	// File is the (first) file the call touched, project-relative when it
	// lies inside the project.
	File   string `json:"file,omitempty"`
	Status string `json:"status"` // ok, error, denied
	Error  string `json:"error,omitempty"`
	// Files lists every file when the call touched more than one.
	Files []string `json:"files,omitempty"`
	// Writes is true when the call created, modified or deleted files.
	Writes bool `json:"writes,omitempty"`
}

// FilesTouched returns the files an agent instance created, modified or
// deleted, in first-touch order, from the successful writes in the tool log.
//
// The log holds every tool call of the session (100,000 lines in a long
// one), so only the agent's own lines are decoded: nexus writes each line
// compact, so an agent's lines are exactly those containing
// "agent_id":"<id>" (quotes inside JSON strings are escaped, so the text
// cannot occur inside a value). Ids that an encoder could spell in more
// than one way are looked for the slow way, line by line.
func FilesTouched(s *state.Store, agentID string) ([]string, error) {
	p := s.L.ToolLogPath()
	lf, st, err := s.L.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	if st.Size() > state.MaxToolLogBytes {
		return nil, &safefile.TooLargeError{Path: p, Limit: state.MaxToolLogBytes}
	}
	f := safefile.Reader(lf, p, state.MaxToolLogBytes)
	out := []string{}
	seen := map[string]bool{}
	add := func(line []byte) {
		var l ToolLogLine
		if state.Decode(line, &l) != nil || l.AgentID != agentID || !l.Writes || l.Status != StatusOK {
			return
		}
		files := l.Files
		if len(files) == 0 && l.File != "" {
			files = []string{l.File}
		}
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	var needle []byte
	if agentID != "" && plainID(agentID) {
		needle = []byte(`"agent_id":"` + agentID + `"`)
	}
	// The log is read in chunks through one buffer (a fresh hook process
	// would otherwise fault in the whole file), each chunk cut after its
	// last complete line; a torn last line (no newline yet) is not part of
	// the log.
	buf := make([]byte, 1<<20)
	n := 0 // bytes held in buf
	for {
		m, rerr := f.Read(buf[n:])
		n += m
		end := bytes.LastIndexByte(buf[:n], '\n') + 1
		scanLines(buf[:end], needle, add)
		n = copy(buf, buf[end:n])
		if rerr == io.EOF {
			return out, nil
		}
		var tl *safefile.TooLargeError
		if errors.As(rerr, &tl) {
			return nil, tl
		}
		if rerr != nil {
			return nil, fmt.Errorf("read %s: %w", p, rerr)
		}
		if n == len(buf) { // a line longer than the buffer
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
}

// scanLines calls add with every line of b (whole lines) that contains
// needle, or with every line when needle is nil.
func scanLines(b, needle []byte, add func([]byte)) {
	if needle == nil {
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			add(b[:i])
			b = b[i+1:]
		}
		return
	}
	for {
		i := bytes.Index(b, needle)
		if i < 0 {
			return
		}
		start := bytes.LastIndexByte(b[:i], '\n') + 1
		end := i + bytes.IndexByte(b[i:], '\n')
		add(b[start:end])
		b = b[end+1:]
	}
}

// plainID reports whether every JSON encoder spells id the same way:
// printable ASCII without quotes, backslashes or HTML-escaped characters.
func plainID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// projectRel renders a path relative to the project when it lies inside it
// (with forward slashes, as nexus-core's fixtures spell files_touched).
func projectRel(project, p string) string {
	if project == "" || !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(project, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}
