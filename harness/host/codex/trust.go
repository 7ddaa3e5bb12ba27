package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Codex runs a hook from the user's or a project's configuration only
// after the user has reviewed it: its [hooks.state."<key>"] trusted_hash in
// the user's config.toml must equal the hook's current hash (docs/codex-notes.md
// §3.6). Both are computed here exactly as Codex 0.169.0 does;
// TestE2ECodexTrustHash (internal/e2e/codex) checks TrustHash against the
// hash Codex itself reports.

// Hook is one command handler as Codex normalises it for its trust hash.
type Hook struct {
	// Event is the hook event (PreToolUse, SessionEnd, …).
	Event string
	// Matcher is the matcher of the handler's group; nil when the group
	// has none.
	Matcher *string
	Command string
	// Timeout in seconds as written; 0 = not written (Codex's default).
	Timeout int
	Async   bool
	// StatusMessage as written; "" = none.
	StatusMessage string
}

// EventKey is the snake_case name Codex uses for an event in hook keys and
// trust hashes: PreToolUse → pre_tool_use.
func EventKey(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shortEvents are the events whose hooks Codex gives a 1 s default timeout
// and caps at 3 s.
func shortEvent(event string) bool { return event == SessionEnd || event == Interrupt }

// MaxShortTimeout is the longest timeout Codex allows a SessionEnd or
// Interrupt hook, in seconds.
const MaxShortTimeout = 3

// EffectiveTimeout is the timeout (seconds) Codex runs a handler with and
// hashes: 600 by default and at least 1; SessionEnd and Interrupt default
// to 1 and are capped at MaxShortTimeout.
func EffectiveTimeout(event string, timeout int) int {
	short := shortEvent(event)
	switch {
	case timeout <= 0 && short:
		return 1
	case timeout <= 0:
		return 600
	case short && timeout > MaxShortTimeout:
		return MaxShortTimeout
	}
	return timeout
}

// MatcherKept reports whether Codex keeps a group's matcher for the event;
// it drops it (from matching and from the hash) for events without a
// subject to match.
func MatcherKept(event string) bool {
	return event != UserPromptSubmit && event != Stop && event != Interrupt
}

// TrustHash is the trusted_hash Codex records for a reviewed hook:
// "sha256:" and the hex SHA-256 of the compact JSON, keys sorted, of
// {"event_name", "matcher" (when kept), "hooks": [the handler normalised:
// type, command, effective timeout, async, statusMessage when set]}, with
// no escaping beyond JSON's own (codex-rs/hooks discovery.rs
// command_hook_hash, codex-rs/config fingerprint.rs version_for_toml).
func TrustHash(h Hook) string {
	handler := map[string]any{"type": "command", "command": h.Command, "timeout": EffectiveTimeout(h.Event, h.Timeout), "async": h.Async}
	if h.StatusMessage != "" {
		handler["statusMessage"] = h.StatusMessage
	}
	id := map[string]any{"event_name": EventKey(h.Event), "hooks": []any{handler}}
	if h.Matcher != nil && MatcherKept(h.Event) {
		id["matcher"] = *h.Matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// A map of strings, numbers and booleans always encodes; keys come out
	// sorted, as Codex's canonical form has them.
	_ = enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// HookKey is the key Codex gives a handler under [hooks.state]: the
// absolute path of the file that declares it, the snake_case event, the
// index of its matcher group within the event and its index within the
// group (from 0).
func HookKey(file, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", file, EventKey(event), group, handler)
}
