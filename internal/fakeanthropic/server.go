// Package fakeanthropic is a scripted stand-in for the Anthropic Messages
// API, for end-to-end tests that drive a real Claude Code CLI
// (ANTHROPIC_BASE_URL pointed at it). Each request to POST /v1/messages is
// answered by the first scripted Turn that matches it and has not been
// used up, as an SSE stream or a JSON message like the real API; every
// request is recorded so a test can assert what the model was given.
// Requests no turn matches get a short text answer and are recorded as
// unmatched; other endpoints (count_tokens, models) get plausible answers.
package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Matcher decides whether a turn answers a request.
type Matcher func(*MessagesRequest) bool

// Reply is what the model answers: text, then tool calls. A reply with tool
// calls stops with "tool_use", else with "end_turn".
type Reply struct {
	Text  string
	Tools []ToolUse
}

// ToolUse is one tool call of a reply. ID must be unique in the session
// (After matches the result by it).
type ToolUse struct {
	ID    string
	Name  string
	Input any
}

// Turn is one scripted model answer.
type Turn = fakeapi.Turn[MessagesRequest, Reply]

// DefaultText answers requests that no turn matches.
const DefaultText = "Nothing scripted for this request."

// Server is the fake API. Create it with New; it is safe for concurrent
// requests (Claude Code runs subagents in parallel).
type Server struct {
	*httptest.Server
	*fakeapi.Script[MessagesRequest, Reply, *Request]
}

// New starts a server answering with the given turns.
func New(turns ...Turn) *Server {
	s := &Server{Script: fakeapi.NewScript[MessagesRequest, Reply, *Request](turns)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Messages returns the recorded Messages API calls (not count_tokens).
func (s *Server) Messages() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Messages != nil && r.Path == "/v1/messages" {
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
	if hr.Method == http.MethodPost && strings.HasPrefix(hr.URL.Path, "/v1/messages") {
		var m MessagesRequest
		if err := json.Unmarshal(body, &m); err != nil {
			s.Record(req, nil)
			apiError(w, http.StatusBadRequest, "invalid_request_error", "body is not a Messages request: "+err.Error())
			return
		}
		req.Messages = &m
	}
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		reply := s.Record(req, req.Messages).Answer(req.Messages, Reply{Text: DefaultText})
		if req.Messages.Stream {
			stream(w, req.Messages.Model, req.Seq, reply)
		} else {
			writeJSON(w, message(req.Messages.Model, req.Seq, reply))
		}
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		s.Record(req, nil)
		writeJSON(w, map[string]any{"input_tokens": estimateTokens(body)})
	case hr.Method == http.MethodGet && hr.URL.Path == "/v1/models":
		s.Record(req, nil)
		writeJSON(w, map[string]any{"data": []any{modelInfo("claude-sonnet-4-5"), modelInfo("claude-opus-4-1"), modelInfo("claude-haiku-4-5")}, "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-haiku-4-5"})
	case hr.Method == http.MethodHead || (hr.Method == http.MethodGet && hr.URL.Path == "/"):
		s.Record(req, nil)
		w.WriteHeader(http.StatusOK)
	default:
		s.Record(req, nil)
		apiError(w, http.StatusNotFound, "not_found_error", "the fake Anthropic API does not serve "+hr.Method+" "+hr.URL.Path)
	}
}

func estimateTokens(body []byte) int { return len(body)/4 + 1 }

func modelInfo(id string) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func usage(out int) map[string]any {
	return map[string]any{"input_tokens": 100, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func stopReason(r Reply) string {
	if len(r.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func blocks(r Reply) []map[string]any {
	var out []map[string]any
	if r.Text != "" || len(r.Tools) == 0 {
		out = append(out, map[string]any{"type": "text", "text": r.Text})
	}
	for _, t := range r.Tools {
		in := t.Input
		if in == nil {
			in = map[string]any{}
		}
		out = append(out, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": in})
	}
	return out
}

func message(model string, seq int, r Reply) map[string]any {
	return map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", seq), "type": "message", "role": "assistant", "model": model,
		"content": blocks(r), "stop_reason": stopReason(r), "stop_sequence": nil, "usage": usage(10),
	}
}

// stream writes the reply as the Messages API's server-sent events.
func stream(w http.ResponseWriter, model string, seq int, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := message(model, seq, r)
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = usage(1)
	event("message_start", map[string]any{"message": start})
	for i, b := range blocks(r) {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			// Two deltas, so a client that only keeps the last one fails.
			text := b["text"].(string)
			half := len(text) / 2
			for _, part := range []string{text[:half], text[half:]} {
				if part != "" {
					event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
				}
			}
		case "tool_use":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stopReason(r), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	event("message_stop", map[string]any{})
}
