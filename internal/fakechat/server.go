// Package fakechat is a scripted stand-in for an OpenAI-compatible Chat
// Completions API, for end-to-end tests that drive a real OpenCode CLI (a
// provider with npm "@ai-sdk/openai-compatible" whose baseURL points at
// it). Each POST {baseURL}/chat/completions is answered by the first
// scripted Turn that matches it and has not been used up, as an SSE stream
// of chat.completion.chunk objects (or one chat.completion when the client
// does not stream); every request is recorded so a test can assert what the
// model was given. OpenCode's title requests (a hidden agent naming the
// session) are answered apart and never use a turn. Requests no turn
// matches get a short text answer; GET {baseURL}/models lists the models
// asked for so far.
package fakechat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Matcher decides whether a turn answers a request.
type Matcher func(*ChatRequest) bool

// Reply is what the model answers: text, then tool calls. A reply with
// tool calls finishes with "tool_calls", else with "stop".
type Reply struct {
	Text  string
	Calls []Call
}

// Call is one tool call of a reply. ID must be unique in the session
// (After matches the result by it).
type Call struct {
	ID   string
	Name string
	// Args is marshalled to the JSON arguments text; a string or
	// json.RawMessage is sent as it is.
	Args any
}

// Turn is one scripted model answer.
type Turn = fakeapi.Turn[ChatRequest, Reply]

const (
	// DefaultText answers requests that no turn matches.
	DefaultText = "Nothing scripted for this request."
	// TitleTurn is the turn name recorded for a title request.
	TitleTurn = "title"
	// TitleText is the answer to every title request.
	TitleText = "E2E session"
)

// IsTitle says whether a request is OpenCode's title generation: the
// hidden "title" agent, whose system prompt begins "You are a title
// generator" (OpenCode 1.18), asks for a short name for the session.
func IsTitle(r *ChatRequest) bool {
	return strings.Contains(r.SystemText(), "You are a title generator")
}

// Server is the fake API. Create it with New; it is safe for concurrent
// requests (OpenCode runs subagents and title calls alongside the
// session).
type Server struct {
	*httptest.Server
	*fakeapi.Script[ChatRequest, Reply, *Request]
}

// New starts a server answering with the given turns. Its URL is the
// provider's baseURL (the API is served at the root).
func New(turns ...Turn) *Server {
	s := &Server{Script: fakeapi.NewScript[ChatRequest, Reply, *Request](turns)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Chats returns the recorded chat completion calls, title requests left
// out.
func (s *Server) Chats() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Chat != nil && r.Turn != TitleTurn {
			out = append(out, r)
		}
	}
	return out
}

// Titles returns the recorded title requests.
func (s *Server) Titles() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Chat != nil && r.Turn == TitleTurn {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	ex, ok := fakeapi.Read(w, hr)
	if !ok {
		return
	}
	req := &Request{Exchange: ex}
	body := req.Body
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/chat/completions":
		var c ChatRequest
		if err := json.Unmarshal(body, &c); err != nil {
			s.Record(req, nil)
			apiError(w, http.StatusBadRequest, "invalid_request_error", "body is not a chat completion request: "+err.Error())
			return
		}
		req.Chat = &c
		// A title request is named TitleTurn and uses no turn.
		var reply Reply
		if IsTitle(&c) {
			s.RecordAs(req, TitleTurn)
			reply = Reply{Text: TitleText}
		} else {
			reply = s.Record(req, &c).Answer(&c, Reply{Text: DefaultText})
		}
		id := fmt.Sprintf("chatcmpl-fake-%d", req.Seq)
		if c.Stream {
			stream(w, id, c.Model, reply, c.StreamOptions != nil && c.StreamOptions.IncludeUsage)
		} else {
			writeJSON(w, completion(id, c.Model, reply))
		}
	case hr.Method == http.MethodGet && hr.URL.Path == "/models":
		s.Record(req, nil)
		writeJSON(w, map[string]any{"object": "list", "data": s.models()})
	default:
		s.Record(req, nil)
		apiError(w, http.StatusNotFound, "not_found", "the fake chat API does not serve "+hr.Method+" "+hr.URL.Path)
	}
}

// models lists the model ids the recorded chat calls asked for.
func (s *Server) models() []map[string]any {
	var ids []string
	for _, r := range s.Requests() {
		if r.Chat != nil && r.Chat.Model != "" && !slices.Contains(ids, r.Chat.Model) {
			ids = append(ids, r.Chat.Model)
		}
	}
	out := []map[string]any{}
	for _, id := range ids {
		out = append(out, map[string]any{"id": id, "object": "model", "created": 1735689600, "owned_by": "fakechat"})
	}
	return out
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil, "param": nil}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func finishReason(r Reply) string {
	if len(r.Calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// arguments is a call's JSON arguments text.
func arguments(c Call) string {
	switch a := c.Args.(type) {
	case nil:
		return "{}"
	case string:
		return a
	case json.RawMessage:
		return string(a)
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		panic(fmt.Sprintf("fakechat: arguments of %s: %v", c.Name, err))
	}
	return string(b)
}

func usage() map[string]any {
	return map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
}

func completion(id, model string, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.Text}
	if len(r.Calls) > 0 {
		var calls []map[string]any
		for _, c := range r.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": arguments(c)}})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(r)}},
		"usage":   usage(),
	}
}

// stream writes the reply as chat.completion.chunk server-sent events:
// the role, the text in two deltas, each tool call as a first delta with
// its id and name and then its arguments in two pieces (so a client that
// keeps only the last delta fails), the finish reason, the usage when
// asked for, and [DONE].
func stream(w http.ResponseWriter, id, model string, r Reply, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	send := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(choices []any, extra map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices}
		for k, v := range extra {
			c[k] = v
		}
		b, _ := json.Marshal(c)
		send(string(b))
	}
	delta := func(d map[string]any) {
		chunk([]any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}, nil)
	}
	delta(map[string]any{"role": "assistant", "content": ""})
	for _, part := range fakeapi.Halves(r.Text) {
		delta(map[string]any{"content": part})
	}
	for i, c := range r.Calls {
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}})
		for _, part := range fakeapi.Halves(arguments(c)) {
			delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}})
		}
	}
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finishReason(r)}}, nil)
	if withUsage {
		chunk([]any{}, map[string]any{"usage": usage()})
	}
	send("[DONE]")
}
