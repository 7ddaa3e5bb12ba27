package fakeresponses

import "strings"

// Prompt matches a request whose last item, developer messages aside, is a
// user message containing s (a new prompt, not the answer to a call). A
// subagent's first request matches the message it was spawned with.
func Prompt(s string) Matcher {
	return func(r *ResponsesRequest) bool {
		it, ok := r.lastPrompt()
		return ok && strings.Contains(it.Content.Text(), s)
	}
}

// After matches the request that carries the output of the call with that
// id, before the model has acted on it: no assistant message and no other
// call follows the output.
func After(callID string) Matcher {
	return func(r *ResponsesRequest) bool {
		found := false
		for _, it := range r.Input {
			switch {
			case it.isOutput() && it.CallID == callID:
				found = true
			case found && (it.isCall() || (it.Type == "message" && it.Role == "assistant")):
				return false
			}
		}
		return found
	}
}

// compactionPrompt opens the user message with which Codex 0.169.0 asks
// the model to summarise the conversation when it compacts it (through
// POST /v1/responses, with no tools, for a provider of its own).
const compactionPrompt = "You are performing a CONTEXT CHECKPOINT COMPACTION."

// Compaction matches Codex's request to summarise the conversation. The
// request still carries the earlier call outputs, so After matchers can
// match it too: script the compaction turn before them.
func Compaction() Matcher {
	return func(r *ResponsesRequest) bool {
		it, ok := r.lastPrompt()
		return ok && strings.HasPrefix(it.Content.Text(), compactionPrompt)
	}
}

// DeveloperHas matches a request whose developer messages contain s (which
// agent is asking: a subagent carries its role's developer_instructions).
func DeveloperHas(s string) Matcher {
	return func(r *ResponsesRequest) bool { return strings.Contains(r.DeveloperText(), s) }
}

// AnyText matches a request where s appears anywhere in what the model is
// given.
func AnyText(s string) Matcher {
	return func(r *ResponsesRequest) bool { return strings.Contains(r.AllText(), s) }
}

// Offers matches a request that offers the tool (named as ToolNames names
// it).
func Offers(tool string) Matcher {
	return func(r *ResponsesRequest) bool { return r.HasTool(tool) }
}

// All matches when every matcher does.
func All(ms ...Matcher) Matcher {
	return func(r *ResponsesRequest) bool {
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
	return func(r *ResponsesRequest) bool { return !m(r) }
}
