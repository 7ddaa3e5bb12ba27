package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Request is one HTTP request the server received, in arrival order.
// Messages is set for POST /v1/messages (and count_tokens) when the body
// parsed.
type Request struct {
	fakeapi.Exchange
	Messages *MessagesRequest
}

// MessagesRequest is the part of a Messages API request the tests look at.
type MessagesRequest struct {
	Model     string    `json:"model"`
	System    Content   `json:"system"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools"`
	Stream    bool      `json:"stream"`
	MaxTokens int       `json:"max_tokens"`
}

// Message is one conversation message. Claude Code sends role "system"
// messages mid-conversation too (the list of agent types and skills).
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Tool is a tool definition offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Block is a content block of any type; the fields of other types stay
// empty.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// Content is a string or a list of blocks on the wire; a string becomes
// one text block.
type Content []Block

func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	*c = blocks
	return nil
}

// Text joins the text of the content's text blocks and, recursively, of
// tool results.
func (c Content) Text() string {
	var b strings.Builder
	for _, bl := range c {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
			b.WriteByte('\n')
		case "tool_result":
			b.WriteString(bl.Content.Text())
		}
	}
	return b.String()
}

// SystemText is the whole system prompt.
func (r *MessagesRequest) SystemText() string { return r.System.Text() }

// Last is the last user or assistant message, or an empty one. Claude
// Code appends role "system" messages (hook context, the agent and skill
// lists) after the user's; they are skipped.
func (r *MessagesRequest) Last() Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "system" {
			return r.Messages[i]
		}
	}
	return Message{}
}

// AllText is every text the model was given: the system prompt and every
// message's text and tool results.
func (r *MessagesRequest) AllText() string {
	var b strings.Builder
	b.WriteString(r.SystemText())
	for _, m := range r.Messages {
		b.WriteString(m.Content.Text())
	}
	return b.String()
}

// ToolResult returns the result given for the tool use id, if any.
func (r *MessagesRequest) ToolResult(id string) (Block, bool) {
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			if bl.Type == "tool_result" && bl.ToolUseID == id {
				return bl, true
			}
		}
	}
	return Block{}, false
}

// ToolNames lists the names of the offered tools.
func (r *MessagesRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// HasTool says whether a tool of that name is offered.
func (r *MessagesRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// FirstUserText is the text of the conversation's first user message (the
// prompt of a subagent, or the session's first prompt with Claude Code's
// reminders).
func (r *MessagesRequest) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content.Text()
		}
	}
	return ""
}
