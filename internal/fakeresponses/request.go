package fakeresponses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/internal/fakeapi"
)

// Request is one HTTP request the server received, in arrival order.
// Responses is set for POST /v1/responses when the body parsed.
type Request struct {
	fakeapi.Exchange
	Responses *ResponsesRequest
}

// ResponsesRequest is the part of a Responses API request the tests look
// at. Codex sends its whole conversation every time (store is false): the
// developer messages (base instructions, permissions, skills, hook
// context, a subagent's developer_instructions), the user messages and the
// model's earlier items with their outputs.
type ResponsesRequest struct {
	Model              string          `json:"model"`
	Instructions       string          `json:"instructions"`
	Input              []Item          `json:"input"`
	Tools              []Tool          `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	Stream             bool            `json:"stream"`
	Store              bool            `json:"store"`
	PreviousResponseID string          `json:"previous_response_id"`
	PromptCacheKey     string          `json:"prompt_cache_key"`
}

// Item is one input item of any type; the fields of other types stay
// empty.
type Item struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// message
	Role    string  `json:"role,omitempty"`
	Content Content `json:"content,omitempty"`
	// function_call, custom_tool_call, tool_search_call and their outputs
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Arguments is a JSON string for function_call and an object for
	// tool_search_call.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Input is a custom tool call's freeform text (apply_patch's patch).
	Input string `json:"input,omitempty"`
	// Output is a string or a list of content items.
	Output Content `json:"output,omitempty"`
	// tool_search_output: the tools the search exposed.
	Tools     []Tool `json:"tools,omitempty"`
	Execution string `json:"execution,omitempty"`
	Status    string `json:"status,omitempty"`
}

// Part is one content part (input_text, output_text, input_image, ...).
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// Content is a string or a list of parts on the wire; a string becomes one
// input_text part.
type Content []Part

func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "input_text", Text: s}}
		return nil
	}
	var parts []Part
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor a list of parts: %w", err)
	}
	*c = parts
	return nil
}

// Text joins the text of every part, one per line.
func (c Content) Text() string {
	var b strings.Builder
	for _, p := range c {
		if p.Text != "" {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Tool is a tool definition offered to the model: a function (JSON
// parameters), a custom tool (freeform grammar, apply_patch), a namespace
// grouping function tools (MCP servers, multi_agent_v1), or a built-in
// (tool_search, web_search).
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Format      json.RawMessage `json:"format,omitempty"`
	Execution   string          `json:"execution,omitempty"`
	Tools       []Tool          `json:"tools,omitempty"`
}

// isOutput says whether the item answers a call.
func (it Item) isOutput() bool {
	switch it.Type {
	case "function_call_output", "custom_tool_call_output", "tool_search_output", "mcp_tool_call_output":
		return true
	}
	return false
}

// isCall says whether the item is a call the model made.
func (it Item) isCall() bool {
	switch it.Type {
	case "function_call", "custom_tool_call", "tool_search_call", "local_shell_call":
		return true
	}
	return false
}

// ArgumentsText is a function call's arguments as sent (a JSON document in
// a string), or a tool search call's arguments object.
func (it Item) ArgumentsText() string {
	var s string
	if json.Unmarshal(it.Arguments, &s) == nil {
		return s
	}
	return string(it.Arguments)
}

// Messages returns the message items of a role, in order.
func (r *ResponsesRequest) Messages(role string) []Item {
	var out []Item
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == role {
			out = append(out, it)
		}
	}
	return out
}

// DeveloperText is the text of every developer message (Codex's base
// instructions, permissions, skills list, hook additionalContext, a
// subagent's developer_instructions) and of the instructions field.
func (r *ResponsesRequest) DeveloperText() string {
	var b strings.Builder
	b.WriteString(r.Instructions)
	for _, it := range r.Messages("developer") {
		b.WriteString(it.Content.Text())
	}
	return b.String()
}

// UserTexts lists the text of each user message, in order (Codex's
// environment context is a user message too).
func (r *ResponsesRequest) UserTexts() []string {
	var out []string
	for _, it := range r.Messages("user") {
		out = append(out, it.Content.Text())
	}
	return out
}

// AllText is every text the model was given: instructions, messages, call
// arguments and outputs.
func (r *ResponsesRequest) AllText() string {
	var b strings.Builder
	b.WriteString(r.Instructions)
	for _, it := range r.Input {
		b.WriteString(it.Content.Text())
		if len(it.Arguments) > 0 {
			b.WriteString(it.ArgumentsText())
			b.WriteByte('\n')
		}
		if it.Input != "" {
			b.WriteString(it.Input)
			b.WriteByte('\n')
		}
		b.WriteString(it.Output.Text())
	}
	return b.String()
}

// Output returns the output item that answers the call id, if any.
func (r *ResponsesRequest) Output(callID string) (Item, bool) {
	for _, it := range r.Input {
		if it.isOutput() && it.CallID == callID {
			return it, true
		}
	}
	return Item{}, false
}

// lastPrompt is the last user message when nothing but developer messages
// follow it (a new prompt, not the answer to a call).
func (r *ResponsesRequest) lastPrompt() (Item, bool) {
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		if it.Type == "message" && it.Role == "developer" {
			continue
		}
		return it, it.Type == "message" && it.Role == "user"
	}
	return Item{}, false
}

// ToolNames lists the offered tools; a tool inside a namespace is named
// "namespace/name", a built-in without a name by its type.
func (r *ResponsesRequest) ToolNames() []string {
	return toolNames(r.Tools)
}

func toolNames(tools []Tool) []string {
	var names []string
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			for _, sub := range t.Tools {
				names = append(names, t.Name+"/"+sub.Name)
			}
		case t.Name == "":
			names = append(names, t.Type)
		default:
			names = append(names, t.Name)
		}
	}
	return names
}

// HasTool says whether a tool of that name (as ToolNames gives it) is
// offered.
func (r *ResponsesRequest) HasTool(name string) bool {
	for _, n := range r.ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}

// Tool returns the offered tool of that name (as ToolNames gives it).
func (r *ResponsesRequest) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Type == "namespace" {
			for _, sub := range t.Tools {
				if t.Name+"/"+sub.Name == name {
					return sub, true
				}
			}
			continue
		}
		if t.Name == name || (t.Name == "" && t.Type == name) {
			return t, true
		}
	}
	return Tool{}, false
}
