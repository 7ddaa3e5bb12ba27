package fakeanthropic

import "strings"

// Prompt matches a request whose last message is a user message without
// tool results (a new prompt, not the answer to a tool call) whose text
// contains s. A subagent's first request matches the prompt the Lead gave
// it.
func Prompt(s string) Matcher {
	return func(r *MessagesRequest) bool {
		last := r.Last()
		if last.Role != "user" {
			return false
		}
		for _, b := range last.Content {
			if b.Type == "tool_result" {
				return false
			}
		}
		return strings.Contains(last.Content.Text(), s)
	}
}

// After matches the request that carries the result of the tool call with
// that id in its last message.
func After(toolUseID string) Matcher {
	return func(r *MessagesRequest) bool {
		for _, b := range r.Last().Content {
			if b.Type == "tool_result" && b.ToolUseID == toolUseID {
				return true
			}
		}
		return false
	}
}

// SystemHas matches a request whose system prompt contains s (which agent
// is asking).
func SystemHas(s string) Matcher {
	return func(r *MessagesRequest) bool { return strings.Contains(r.SystemText(), s) }
}

// AnyText matches a request where s appears anywhere in what the model is
// given.
func AnyText(s string) Matcher {
	return func(r *MessagesRequest) bool { return strings.Contains(r.AllText(), s) }
}

// All matches when every matcher does.
func All(ms ...Matcher) Matcher {
	return func(r *MessagesRequest) bool {
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
	return func(r *MessagesRequest) bool { return !m(r) }
}
