package fakechat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Request is one HTTP request the server received, in arrival order. Chat
// is set for POST /chat/completions when the body parsed.
type Request struct {
	// Exchange's Turn is TitleTurn for a title request.
	fakeapi.Exchange
	Chat *ChatRequest
}

// ChatRequest is the part of a Chat Completions request the tests look at.
type ChatRequest struct {
	Model         string          `json:"model"`
	Messages      []Message       `json:"messages"`
	Tools         []Tool          `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions *StreamOptions  `json:"stream_options,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
}

// StreamOptions asks for a final usage chunk.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one conversation message: role system, user, assistant or
// tool. An assistant message carries the model's tool calls; a tool
// message answers one of them by id.
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is a function call the model made, as the client sends it back.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function offered to the model.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is an offered function's name, description and JSON Schema.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Part is one content part; the fields of other types stay empty.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// Content is null, a string or a list of parts on the wire; a string
// becomes one text part, null no part.
type Content []Part

func (c *Content) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*c = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var parts []Part
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content is neither null, a string nor a list of parts: %w", err)
	}
	*c = parts
	return nil
}

// Text joins the text of the content's text parts, each followed by a
// newline.
func (c Content) Text() string {
	var b strings.Builder
	for _, p := range c {
		if p.Type == "text" {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// SystemText is every system message's text, in order (OpenCode sends the
// system prompt as one or more leading system messages).
func (r *ChatRequest) SystemText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "system" {
			b.WriteString(m.Content.Text())
		}
	}
	return b.String()
}

// Last is the last non-system message, or an empty one.
func (r *ChatRequest) Last() Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "system" {
			return r.Messages[i]
		}
	}
	return Message{}
}

// Results are the tool messages after the last assistant message: the
// answers to the model's latest tool calls.
func (r *ChatRequest) Results() []Message {
	var out []Message
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "assistant" {
			break
		}
		if m.Role == "tool" {
			out = append([]Message{m}, out...)
		}
	}
	return out
}

// AllText is every text the model was given: the system prompt and every
// message's text, tool results included.
func (r *ChatRequest) AllText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content.Text())
	}
	return b.String()
}

// ToolResult returns the tool message that answers the call with that id.
func (r *ChatRequest) ToolResult(id string) (Message, bool) {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m, true
		}
	}
	return Message{}, false
}

// ToolNames lists the names of the offered tools.
func (r *ChatRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// Tool returns the offered tool of that name.
func (r *ChatRequest) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// HasTool says whether a tool of that name is offered.
func (r *ChatRequest) HasTool(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// FirstUserText is the text of the conversation's first user message (a
// subagent's prompt, or the session's first prompt).
func (r *ChatRequest) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content.Text()
		}
	}
	return ""
}
