// Package fakeresponses is a scripted stand-in for the OpenAI Responses
// API, for end-to-end tests that drive a real Codex CLI (a model provider
// with wire_api = "responses" and base_url pointed at it). Each request to
// POST /v1/responses is answered by the first scripted Turn that matches it
// and has not been used up, as the server-sent events Codex parses (or one
// JSON response when stream is false); every request is recorded so a test
// can assert what the model was given. Requests no turn matches get a
// short text answer and are recorded as unmatched; GET /v1/models gets a
// plausible list; anything else is a recorded 404.
package fakeresponses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Matcher decides whether a turn answers a request.
type Matcher func(*ResponsesRequest) bool

// Reply is what the model answers: an assistant message with Text (none
// when Text is empty and there are calls), then the calls in order. Codex
// runs the calls and sends their outputs in its next request; a reply
// without calls ends the turn.
type Reply struct {
	Text  string
	Calls []Call
}

// The kinds of call a reply can make (the Responses API item types).
const (
	// KindFunction calls a function tool (exec_command, spawn_agent, an MCP
	// tool) with JSON arguments.
	KindFunction = "function_call"
	// KindCustom calls a freeform custom tool (apply_patch) with raw text.
	KindCustom = "custom_tool_call"
	// KindToolSearch asks Codex to search its deferred tools (MCP tools,
	// the multi-agent tools); Codex answers with a tool_search_output that
	// makes the found tools callable in the next request.
	KindToolSearch = "tool_search_call"
)

// Call is one call of a reply. ID is the call_id and must be unique in the
// session (After matches the output by it).
type Call struct {
	Kind string
	ID   string
	Name string
	// Namespace is set when calling a function inside a namespace tool.
	Namespace string
	// Args is a function call's arguments (sent as a JSON string) or a tool
	// search's arguments object.
	Args any
	// Input is a custom tool call's freeform text.
	Input string
}

// Function is a call of a function tool with arguments args.
func Function(id, name string, args any) Call {
	return Call{Kind: KindFunction, ID: id, Name: name, Args: args}
}

// NamespacedFunction is a call of a function tool inside a namespace.
func NamespacedFunction(id, namespace, name string, args any) Call {
	return Call{Kind: KindFunction, ID: id, Namespace: namespace, Name: name, Args: args}
}

// Custom is a call of a freeform custom tool (apply_patch) with text input.
func Custom(id, name, input string) Call {
	return Call{Kind: KindCustom, ID: id, Name: name, Input: input}
}

// ToolSearch is a client-executed tool_search call for query.
func ToolSearch(id, query string) Call {
	return Call{Kind: KindToolSearch, ID: id, Args: map[string]any{"query": query}}
}

// Turn is one scripted model answer.
type Turn = fakeapi.Turn[ResponsesRequest, Reply]

// DefaultText answers requests that no turn matches.
const DefaultText = "Nothing scripted for this request."

// Server is the fake API. Create it with New; it is safe for concurrent
// requests (Codex runs subagents in parallel).
type Server struct {
	*httptest.Server
	*fakeapi.Script[ResponsesRequest, Reply, *Request]
}

// New starts a server answering with the given turns.
func New(turns ...Turn) *Server {
	s := &Server{Script: fakeapi.NewScript[ResponsesRequest, Reply, *Request](turns)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the value for a Codex model provider's base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Responses returns the recorded POST /v1/responses calls that parsed.
func (s *Server) Responses() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Responses != nil {
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
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/responses":
		var rr ResponsesRequest
		if err := json.Unmarshal(body, &rr); err != nil {
			s.Record(req, nil)
			apiError(w, http.StatusBadRequest, "body is not a Responses request: "+err.Error())
			return
		}
		req.Responses = &rr
		reply := s.Record(req, &rr).Answer(&rr, Reply{Text: DefaultText})
		id := fmt.Sprintf("resp_fake_%d", req.Seq)
		items := outputItems(req.Seq, reply)
		if rr.Stream {
			stream(w, id, rr.Model, items)
		} else {
			writeJSON(w, response(id, rr.Model, "completed", items))
		}
	case hr.Method == http.MethodGet && hr.URL.Path == "/v1/models":
		s.Record(req, nil)
		var data []any
		for _, id := range []string{"gpt-5.5", "gpt-5.6-sol"} {
			data = append(data, map[string]any{"id": id, "object": "model", "created": 1735689600, "owned_by": "fake"})
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
	default:
		s.Record(req, nil)
		apiError(w, http.StatusNotFound, "the fake Responses API does not serve "+hr.Method+" "+hr.URL.Path)
	}
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// outputItems turns a reply into the completed output items of a
// response, with ids unique in the server's lifetime.
func outputItems(seq int, r Reply) []map[string]any {
	var out []map[string]any
	if r.Text != "" || len(r.Calls) == 0 {
		out = append(out, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_fake_%d", seq), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}},
		})
	}
	for i, c := range r.Calls {
		item := map[string]any{"type": c.Kind, "call_id": c.ID, "status": "completed"}
		switch c.Kind {
		case KindFunction:
			item["id"] = fmt.Sprintf("fc_fake_%d_%d", seq, i)
			item["name"] = c.Name
			if c.Namespace != "" {
				item["namespace"] = c.Namespace
			}
			args := c.Args
			if args == nil {
				args = map[string]any{}
			}
			item["arguments"] = marshalArgs(args)
		case KindCustom:
			item["id"] = fmt.Sprintf("ctc_fake_%d_%d", seq, i)
			item["name"] = c.Name
			item["input"] = c.Input
		case KindToolSearch:
			item["id"] = fmt.Sprintf("tsc_fake_%d_%d", seq, i)
			item["execution"] = "client"
			item["arguments"] = c.Args
		default:
			panic("fakeresponses: unknown call kind " + c.Kind)
		}
		out = append(out, item)
	}
	return out
}

// marshalArgs encodes a function call's arguments as a model writes them
// (no HTML escaping of <, > and &, which shell commands are full of).
func marshalArgs(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("fakeresponses: call arguments do not encode: " + err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func usage() map[string]any {
	return map[string]any{
		"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 110,
	}
}

func response(id, model, status string, output []map[string]any) map[string]any {
	r := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status, "model": model, "output": output}
	if status == "completed" {
		r["usage"] = usage()
	}
	return r
}

// inProgress is an item as response.output_item.added announces it, before
// its text or arguments stream in.
func inProgress(item map[string]any) map[string]any {
	c := make(map[string]any, len(item))
	for k, v := range item {
		c[k] = v
	}
	c["status"] = "in_progress"
	switch item["type"] {
	case "message":
		c["content"] = []any{}
	case KindFunction:
		c["arguments"] = ""
	case KindCustom:
		c["input"] = ""
	}
	return c
}

// stream writes the response as the Responses API's server-sent events:
// response.created, then per output item its added event, the deltas and
// done events of its text or arguments, and output_item.done, then
// response.completed with the usage.
func stream(w http.ResponseWriter, id, model string, items []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	event := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("response.created", map[string]any{"response": response(id, model, "in_progress", []map[string]any{})})
	event("response.in_progress", map[string]any{"response": response(id, model, "in_progress", []map[string]any{})})
	for i, item := range items {
		itemID := item["id"]
		event("response.output_item.added", map[string]any{"output_index": i, "item": inProgress(item)})
		switch item["type"] {
		case "message":
			text := item["content"].([]any)[0].(map[string]any)["text"].(string)
			loc := func() map[string]any { return map[string]any{"item_id": itemID, "output_index": i, "content_index": 0} }
			part := loc()
			part["part"] = map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			event("response.content_part.added", part)
			for _, d := range fakeapi.Halves(text) {
				ev := loc()
				ev["delta"] = d
				event("response.output_text.delta", ev)
			}
			done := loc()
			done["text"] = text
			event("response.output_text.done", done)
			part = loc()
			part["part"] = map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
			event("response.content_part.done", part)
		case KindFunction:
			args := item["arguments"].(string)
			for _, d := range fakeapi.Halves(args) {
				event("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": i, "delta": d})
			}
			event("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": i, "arguments": args})
		case KindCustom:
			input := item["input"].(string)
			for _, d := range fakeapi.Halves(input) {
				event("response.custom_tool_call_input.delta", map[string]any{"item_id": itemID, "call_id": item["call_id"], "output_index": i, "delta": d})
			}
			event("response.custom_tool_call_input.done", map[string]any{"item_id": itemID, "call_id": item["call_id"], "output_index": i, "input": input})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": response(id, model, "completed", items)})
	if flusher != nil {
		flusher.Flush()
	}
}
