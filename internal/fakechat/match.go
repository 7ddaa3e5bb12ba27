package fakechat

import "strings"

// Prompt matches a request whose last message is a user message (a new
// prompt, not the answer to a tool call) whose text contains s. A
// subagent's first request matches the prompt its parent gave it.
func Prompt(s string) Matcher {
	return func(r *ChatRequest) bool {
		last := r.Last()
		return last.Role == "user" && strings.Contains(last.Content.Text(), s)
	}
}

// After matches the request that answers the tool call with that id: its
// result is among the tool messages after the last assistant message.
func After(callID string) Matcher {
	return func(r *ChatRequest) bool {
		for _, m := range r.Results() {
			if m.ToolCallID == callID {
				return true
			}
		}
		return false
	}
}

// SystemHas matches a request whose system prompt contains s (which agent
// is asking).
func SystemHas(s string) Matcher {
	return func(r *ChatRequest) bool { return strings.Contains(r.SystemText(), s) }
}

// AnyText matches a request where s appears anywhere in what the model is
// given.
func AnyText(s string) Matcher {
	return func(r *ChatRequest) bool { return strings.Contains(r.AllText(), s) }
}

// HasTool matches a request that offers a tool of that name.
func HasTool(name string) Matcher {
	return func(r *ChatRequest) bool { return r.HasTool(name) }
}

// All matches when every matcher does.
func All(ms ...Matcher) Matcher {
	return func(r *ChatRequest) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// Not inverts a matcher.
func Not(m Matcher) Matcher {
	return func(r *ChatRequest) bool { return !m(r) }
}
