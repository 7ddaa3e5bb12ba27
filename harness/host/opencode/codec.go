package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// InputError is a request nexus cannot read: for the tool gate a denial,
// whatever gate.policy says (Unreadable).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// maxPending bounds the notes kept for a tool's result (Encode).
const maxPending = 64

// Codec turns forwarded hooks into lifecycle events and the engine's
// replies into what the plugin applies. It remembers OpenCode's sessions
// (which are subagents, which roots this process started) in a
// SessionStore, with a copy in memory for the long-lived child; one Codec
// serves one nexus process. It is safe for concurrent use, although the
// plugin asks one hook at a time.
type Codec struct {
	store SessionStore

	mu    sync.Mutex
	known *Sessions
	// pending holds context for a tool call's result, by call id: a
	// warning the gate gave before the call, which tool.execute.before
	// cannot show the model.
	pending map[string]string
}

// NewCodec returns a codec keeping its record in store (nil: in memory
// only).
func NewCodec(store SessionStore) *Codec {
	if store == nil {
		store = &MemoryStore{}
	}
	return &Codec{store: store, known: NewSessions(), pending: map[string]string{}}
}

// Gated reports whether a hook is the tool gate.
func Gated(hook string) bool { return hook == HookToolBefore }

// Hook inputs and outputs, the parts nexus reads (docs/opencode-notes.md
// has every member).
type (
	chatInput struct {
		SessionID string `json:"sessionID"`
		Agent     string `json:"agent"`
	}
	chatOutput struct {
		Message struct {
			SessionID string `json:"sessionID"`
		} `json:"message"`
		Parts []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Synthetic bool   `json:"synthetic"`
			Ignored   bool   `json:"ignored"`
		} `json:"parts"`
	}
	toolInput struct {
		Tool      string          `json:"tool"`
		SessionID string          `json:"sessionID"`
		CallID    string          `json:"callID"`
		Args      json.RawMessage `json:"args"`
	}
	toolBeforeOutput struct {
		Args json.RawMessage `json:"args"`
	}
	toolAfterOutput struct {
		Output   json.RawMessage `json:"output"`
		Metadata struct {
			SessionID string `json:"sessionId"`
		} `json:"metadata"`
	}
	eventInput struct {
		Event struct {
			Type       string `json:"type"`
			Properties struct {
				Info struct {
					ID       string `json:"id"`
					ParentID string `json:"parentID"`
					Agent    string `json:"agent"`
				} `json:"info"`
			} `json:"properties"`
		} `json:"event"`
	}
)

// decodeInto decodes one hook argument, naming it in the error.
func decodeInto(raw json.RawMessage, hook, which string, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return inputErrorf("%s %s: field %s must not be %s", hook, which, te.Field, te.Value)
		}
		return inputErrorf("%s %s: %v", hook, which, err)
	}
	return nil
}

// Decode turns one forwarded hook into the lifecycle events it means, in
// the order the engine must see them (none for a hook that means nothing
// to nexus), and updates the session record. A request it cannot read is
// an *InputError.
func (c *Codec) Decode(ctx context.Context, req Request) ([]lifecycle.Event, error) {
	switch req.Hook {
	case HookChatMessage:
		return c.chatMessage(ctx, req)
	case HookToolBefore, HookToolAfter:
		return c.toolCall(ctx, req)
	case HookEvent:
		return c.event(ctx, req)
	case HookDispose:
		return c.dispose(ctx, req)
	}
	return nil, inputErrorf("unknown OpenCode hook %q (nexus handles %s)", req.Hook, strings.Join(Hooks, ", "))
}

// lookup returns what is known of a session, reading the record again
// when this process has not seen it (another process may have: the
// fallback, or an earlier OpenCode process for a resumed session).
func (c *Codec) lookup(ctx context.Context, id string) (*Session, *Sessions, error) {
	c.mu.Lock()
	s := c.known.Get(id)
	known := c.known
	c.mu.Unlock()
	if s != nil {
		return s, known, nil
	}
	fresh, err := c.store.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Sessions seen only in memory (roots not started yet) stay known.
	for k, v := range c.known.Sessions {
		if fresh.Sessions[k] == nil {
			fresh.Put(k, v)
		}
	}
	c.known = fresh
	return fresh.Get(id), fresh, nil
}

// update changes the record in the store and keeps the result.
func (c *Codec) update(ctx context.Context, fn func(*Sessions) error) error {
	s, err := c.store.Update(ctx, fn)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.known.Sessions {
		if s.Sessions[k] == nil {
			s.Put(k, v)
		}
	}
	c.known = s
	return nil
}

// remember notes a session in memory only.
func (c *Codec) remember(id string, v *Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known.Get(id) == nil {
		c.known.Put(id, v)
	}
}

// scope fills an event's session, directory and agent from the session
// the hook fired in.
func scope(ev *lifecycle.Event, req Request, id string, s *Session, all *Sessions) {
	ev.Dir = req.Dir
	ev.SessionID = id
	if s.Child() {
		ev.AgentID, ev.AgentType = id, s.Agent
		if all != nil {
			ev.SessionID = all.Root(id)
		}
	}
}

func (c *Codec) chatMessage(ctx context.Context, req Request) ([]lifecycle.Event, error) {
	var in chatInput
	var out chatOutput
	if err := decodeInto(req.Input, req.Hook, "input", &in); err != nil {
		return nil, err
	}
	if err := decodeInto(req.Output, req.Hook, "output", &out); err != nil {
		return nil, err
	}
	id := in.SessionID
	if id == "" {
		id = out.Message.SessionID
	}
	if id == "" {
		return nil, inputErrorf("chat.message: no sessionID")
	}
	var said []string
	var results []taskResult
	for _, p := range out.Parts {
		if p.Type != "text" || p.Ignored {
			continue
		}
		if p.Synthetic {
			if r, ok := parseTaskResult(p.Text); ok {
				results = append(results, r)
			}
			continue
		}
		said = append(said, p.Text)
	}
	s, all, err := c.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.Child() {
		ev := lifecycle.Event{Name: lifecycle.SubagentSpawn}
		scope(&ev, req, id, s, all)
		switch {
		case !s.Spawned:
		case s.Done:
			ev.Name = lifecycle.SubagentResume
		default:
			return nil, nil // more input to a running subagent
		}
		err := c.update(ctx, func(r *Sessions) error {
			cur := r.Get(id)
			if cur == nil {
				cur = &Session{Parent: s.Parent, Agent: s.Agent}
			}
			cur.Spawned, cur.Done = true, false
			r.Put(id, cur)
			return nil
		})
		return []lifecycle.Event{ev}, err
	}
	var evs []lifecycle.Event
	if s == nil || s.PID != req.PID || s.Ended {
		start := lifecycle.Event{Name: lifecycle.SessionStart, Source: "startup"}
		if s != nil && s.PID != 0 {
			start.Source = "resume"
		}
		scope(&start, req, id, s, all)
		evs = append(evs, start)
		if err := c.update(ctx, func(r *Sessions) error {
			cur := r.Get(id)
			if cur == nil {
				cur = &Session{}
			}
			cur.PID, cur.Ended = req.PID, false
			r.Put(id, cur)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if len(said) > 0 {
		ev := lifecycle.Event{Name: lifecycle.UserMessage, Prompt: strings.Join(said, "\n")}
		scope(&ev, req, id, s, all)
		evs = append(evs, ev)
	}
	for _, r := range results {
		ev, err := c.completion(ctx, req, id, all, r, "")
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// completion is the subagent_complete of a child session whose task
// ended, from the session the task ran in.
func (c *Codec) completion(ctx context.Context, req Request, from string, all *Sessions, r taskResult, agentType string) (lifecycle.Event, error) {
	child, _, err := c.lookup(ctx, r.id)
	if err != nil {
		return lifecycle.Event{}, err
	}
	ev := lifecycle.Event{Name: lifecycle.SubagentComplete, Dir: req.Dir, AgentID: r.id, AgentType: agentType, SessionID: all.Root(from)}
	if child.Child() {
		ev.AgentType = child.Agent
	}
	msg := r.text
	ev.LastMessage = &msg
	err = c.update(ctx, func(s *Sessions) error {
		cur := s.Get(r.id)
		if cur == nil {
			cur = &Session{Parent: from, Agent: ev.AgentType, Spawned: true}
		}
		cur.Done = true
		s.Put(r.id, cur)
		return nil
	})
	return ev, err
}

func (c *Codec) toolCall(ctx context.Context, req Request) ([]lifecycle.Event, error) {
	var in toolInput
	if err := decodeInto(req.Input, req.Hook, "input", &in); err != nil {
		return nil, err
	}
	if in.Tool == "" {
		return nil, inputErrorf("%s: no tool named", req.Hook)
	}
	if in.SessionID == "" {
		return nil, inputErrorf("%s: no sessionID", req.Hook)
	}
	args := in.Args
	var after toolAfterOutput
	if req.Hook == HookToolBefore {
		// The arguments the call runs with are the output's (a plugin may
		// change them); the input carries none.
		var out toolBeforeOutput
		if err := decodeInto(req.Output, req.Hook, "output", &out); err != nil {
			return nil, err
		}
		args = out.Args
	} else if err := decodeInto(req.Output, req.Hook, "output", &after); err != nil {
		return nil, err
	}
	input, err := toolArgs(args)
	if err != nil {
		return nil, inputErrorf("%s: the %s call's args %v", req.Hook, in.Tool, err)
	}
	s, all, err := c.lookup(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	ev := lifecycle.Event{Name: lifecycle.PreToolUse, Tool: in.Tool, ToolInput: input}
	scope(&ev, req, in.SessionID, s, all)
	if req.Hook == HookToolBefore {
		return []lifecycle.Event{ev}, nil
	}
	ev.Name, ev.Status = lifecycle.PostToolUse, lifecycle.StatusOK
	if in.Tool != ToolTask {
		return []lifecycle.Event{ev}, nil
	}
	var text string
	if json.Unmarshal(after.Output, &text) != nil {
		return []lifecycle.Event{ev}, nil
	}
	r, ok := parseTaskResult(text)
	if !ok {
		return []lifecycle.Event{ev}, nil
	}
	if after.Metadata.SessionID != "" {
		r.id = after.Metadata.SessionID
	}
	agentType, _ := input["subagent_type"].(string)
	done, err := c.completion(ctx, req, in.SessionID, all, r, agentType)
	if err != nil {
		return nil, err
	}
	// The completion first: its note for Lead joins the task's result.
	return []lifecycle.Event{done, ev}, nil
}

func (c *Codec) event(ctx context.Context, req Request) ([]lifecycle.Event, error) {
	var in eventInput
	if err := decodeInto(req.Input, req.Hook, "input", &in); err != nil {
		return nil, err
	}
	if in.Event.Type != EventSessionCreated {
		return nil, nil
	}
	info := in.Event.Properties.Info
	if info.ID == "" {
		return nil, inputErrorf("session.created: no session id")
	}
	if info.ParentID == "" {
		c.remember(info.ID, &Session{})
		return nil, nil
	}
	return nil, c.update(ctx, func(s *Sessions) error {
		cur := s.Get(info.ID)
		if cur == nil {
			cur = &Session{}
		}
		cur.Parent, cur.Agent = info.ParentID, info.Agent
		s.Put(info.ID, cur)
		return nil
	})
}

// dispose ends the root sessions this OpenCode process started: one
// session_end, named after the latest of them.
func (c *Codec) dispose(ctx context.Context, req Request) ([]lifecycle.Event, error) {
	var last string
	var lastSeq uint64
	err := c.update(ctx, func(s *Sessions) error {
		for id, v := range s.Sessions {
			if v.Child() || v.PID != req.PID || req.PID == 0 || v.Ended {
				continue
			}
			v.Ended = true
			if v.Seq >= lastSeq {
				last, lastSeq = id, v.Seq
			}
		}
		return nil
	})
	if err != nil || last == "" {
		return nil, err
	}
	return []lifecycle.Event{{Name: lifecycle.SessionEnd, SessionID: last, Dir: req.Dir}}, nil
}

// toolArgs decodes a call's arguments: an object (none is an empty one).
func toolArgs(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("must be a JSON object")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
			return nil, errors.New("hold a number too large for a 64-bit float; JSON numbers nexus reads must lie within ±1.8e308")
		}
		return nil, fmt.Errorf("are not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return m, nil
}

// taskResult is what OpenCode's task tool reports of a subagent:
// <task id="ses_…" state="completed">\n<task_result>\ntext\n</task_result>\n</task>
// (state error: <task_error>; a background task's start: state running).
type taskResult struct {
	id, state, text string
}

// parseTaskResult reads a task report; ok only for an ended task
// (completed or error).
func parseTaskResult(s string) (taskResult, bool) {
	s = strings.TrimSpace(s)
	head, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(head, `<task id="`) || !strings.HasSuffix(head, `">`) {
		return taskResult{}, false
	}
	var r taskResult
	attrs := strings.TrimSuffix(strings.TrimPrefix(head, `<task id="`), `">`)
	id, state, ok := strings.Cut(attrs, `" state="`)
	if !ok || id == "" || strings.ContainsAny(id, `"<> `) {
		return taskResult{}, false
	}
	r.id, r.state = id, state
	tag := "task_result"
	switch state {
	case "completed":
	case "error":
		tag = "task_error"
	default:
		return taskResult{}, false
	}
	open, end := "<"+tag+">", "</"+tag+">"
	i := strings.Index(rest, open)
	j := strings.LastIndex(rest, end)
	if i < 0 || j < i {
		return taskResult{}, false
	}
	r.text = strings.TrimSpace(rest[i+len(open) : j])
	return r, true
}

// Encode renders the engine's replies to one hook's events (in the order
// Decode gave them) as what the plugin applies: a denial makes
// tool.execute.before throw its reason; context becomes synthetic text
// parts of the user's message (chat.message) or is added to the tool's
// result (tool.execute.after, with any warning the gate gave the same call
// before it ran). Notices have nowhere to go: `opencode run` and the TUI
// show a plugin nothing of its own.
func (c *Codec) Encode(req Request, replies []lifecycle.Reply) Reply {
	out := Reply{ID: req.ID}
	var ctxs []string
	for _, r := range replies {
		if r.Decision == "deny" && out.Block == "" {
			out.Block = r.Reason
			if out.Block == "" {
				out.Block = "nexus denied this tool call"
			}
		}
		if t := strings.TrimSpace(r.Context); t != "" {
			ctxs = append(ctxs, t)
		}
	}
	switch req.Hook {
	case HookChatMessage:
		out.Parts = ctxs
	case HookToolBefore:
		if out.Block != "" || len(ctxs) == 0 {
			return out
		}
		if id := callID(req); id != "" {
			c.mu.Lock()
			if len(c.pending) >= maxPending {
				clear(c.pending)
			}
			c.pending[id] = strings.Join(ctxs, "\n\n")
			c.mu.Unlock()
		}
	case HookToolAfter:
		if id := callID(req); id != "" {
			c.mu.Lock()
			if p, ok := c.pending[id]; ok {
				ctxs = append([]string{p}, ctxs...)
				delete(c.pending, id)
			}
			c.mu.Unlock()
		}
		out.Append = strings.Join(ctxs, "\n\n")
	}
	if req.Hook != HookToolBefore {
		out.Block = ""
	}
	return out
}

// callID reads a tool hook's call id.
func callID(req Request) string { return jsonscan.String(req.Input, "callID") }

// Handle runs one request through the codec: Decode, run for each event
// in order, Encode. A request it cannot read is an *InputError; run's
// first error stops the rest and is returned as it is. The caller applies
// nexus's failure policy (Unreadable, Unjudged, FailClosed for the gate).
func (c *Codec) Handle(ctx context.Context, req Request, run func(context.Context, lifecycle.Event) (lifecycle.Reply, error)) (Reply, error) {
	evs, err := c.Decode(ctx, req)
	if err != nil {
		return Reply{ID: req.ID}, err
	}
	replies := make([]lifecycle.Reply, 0, len(evs))
	for _, ev := range evs {
		r, err := run(ctx, ev)
		if err != nil {
			return Reply{ID: req.ID}, err
		}
		replies = append(replies, r)
	}
	return c.Encode(req, replies), nil
}

// FailClosed is the reply to a tool call nexus could not check while
// gate.policy is fail-closed; for any other hook an empty reply (other
// hooks fail open).
func FailClosed(req Request, problem string) Reply {
	return gateReply(req, "nexus could not check this tool call ("+problem+"), and gate.policy is fail-closed, so it is denied. Fix the problem or set gate.policy: fail-open in .nexus/nexus.yaml.")
}

// Unjudged is the reply to a tool call nexus had nothing to check with
// (its configuration or distribution did not load): a denial, whatever
// gate.policy says.
func Unjudged(req Request, problem string) Reply {
	return gateReply(req, "nexus denied this tool call: it could not load what it checks tool calls with ("+problem+"). A tool call nexus cannot check does not run; fix the problem (nexus doctor shows it).")
}

// Unreadable is the reply to a tool call whose hook nexus could not read:
// a denial, whatever gate.policy says.
func Unreadable(req Request, problem string) Reply {
	return gateReply(req, "nexus denied this tool call: it could not read the call to check it ("+problem+"). A tool call nexus cannot check does not run; make the call again with well-formed input.")
}

func gateReply(req Request, reason string) Reply {
	if !Gated(req.Hook) {
		return Reply{ID: req.ID}
	}
	return Reply{ID: req.ID, Block: reason}
}
