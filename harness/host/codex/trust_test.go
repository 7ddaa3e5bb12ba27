package codex

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexListed is one hook as `codex app-server`'s hooks/list reported it
// (Codex 0.169.0, the exploration runs of docs/codex-notes.md §12): the
// handler after Codex's normalisation and the hash Codex computed.
type codexListed struct {
	Key           string  `json:"key"`
	Command       string  `json:"command"`
	Matcher       *string `json:"matcher"`
	TimeoutSec    int     `json:"timeoutSec"`
	Async         bool    `json:"async"`
	StatusMessage *string `json:"statusMessage"`
	CurrentHash   string  `json:"currentHash"`
}

func readListed(t *testing.T, name string) []codexListed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "trust", name))
	if err != nil {
		t.Fatal(err)
	}
	var hs []codexListed
	if err := json.Unmarshal(b, &hs); err != nil {
		t.Fatal(err)
	}
	return hs
}

// eventOfKey maps a key's snake_case event back to the event.
func eventOfKey(t *testing.T, key string) string {
	t.Helper()
	parts := strings.Split(key, ":")
	snake := parts[len(parts)-3]
	for _, ev := range Events {
		if EventKey(ev) == snake {
			return ev
		}
	}
	t.Fatalf("key %s names no known event", key)
	return ""
}

// TestTrustHashMatchesCodex recomputes the hashes Codex itself reported
// for twenty handlers: every event, matchers kept and dropped, a status
// message with <&> and ü, async, default, long and clamped timeouts.
func TestTrustHashMatchesCodex(t *testing.T) {
	for _, file := range []string{"hashprobe-hooks-list.json", "all-events-hooks-list.json"} {
		for _, h := range readListed(t, file) {
			hook := Hook{Event: eventOfKey(t, h.Key), Matcher: h.Matcher, Command: h.Command, Timeout: h.TimeoutSec, Async: h.Async}
			if h.StatusMessage != nil {
				hook.StatusMessage = *h.StatusMessage
			}
			if got := TrustHash(hook); got != h.CurrentHash {
				t.Errorf("%s: TrustHash %s, Codex %s", h.Key, got, h.CurrentHash)
			}
		}
	}
}

// TestTrustHashCanonicalForm checks the hashed text itself, written out by
// hand: keys sorted at every level, compact, <&> and non-ASCII literal.
func TestTrustHashCanonicalForm(t *testing.T) {
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(h[:])
	}
	m := "Bash"
	for _, c := range []struct {
		hook Hook
		text string
	}{
		{Hook{Event: PreToolUse, Matcher: &m, Command: `x "<&>" ü`, Timeout: 5, StatusMessage: "s"},
			`{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"x \"<&>\" ü","statusMessage":"s","timeout":5,"type":"command"}],"matcher":"Bash"}`},
		{Hook{Event: Stop, Matcher: &m, Command: "c"},
			`{"event_name":"stop","hooks":[{"async":false,"command":"c","timeout":600,"type":"command"}]}`},
		{Hook{Event: SessionEnd, Command: "c", Timeout: 30, Async: true},
			`{"event_name":"session_end","hooks":[{"async":true,"command":"c","timeout":3,"type":"command"}]}`},
	} {
		if got, want := TrustHash(c.hook), sum(c.text); got != want {
			t.Errorf("TrustHash(%+v) = %s, want the hash of %s (%s)", c.hook, got, c.text, want)
		}
	}
}

func TestEventKeyAndTimeouts(t *testing.T) {
	want := map[string]string{
		PreToolUse: "pre_tool_use", PermissionRequest: "permission_request", PostToolUse: "post_tool_use",
		PreCompact: "pre_compact", PostCompact: "post_compact", SessionStart: "session_start", SessionEnd: "session_end",
		UserPromptSubmit: "user_prompt_submit", SubagentStart: "subagent_start", SubagentStop: "subagent_stop", Stop: "stop", Interrupt: "interrupt",
	}
	for ev, k := range want {
		if got := EventKey(ev); got != k {
			t.Errorf("EventKey(%s) = %s, want %s", ev, got, k)
		}
	}
	for _, c := range []struct {
		event     string
		in, wantT int
	}{
		{PreToolUse, 0, 600}, {PreToolUse, 1, 1}, {PreToolUse, 100000, 100000},
		{SessionEnd, 0, 1}, {SessionEnd, 2, 2}, {SessionEnd, 10, 3}, {Interrupt, 0, 1}, {Interrupt, 3, 3},
	} {
		if got := EffectiveTimeout(c.event, c.in); got != c.wantT {
			t.Errorf("EffectiveTimeout(%s, %d) = %d, want %d", c.event, c.in, got, c.wantT)
		}
	}
	if got, want := HookKey("/h/hooks.json", SubagentStart, 2, 1), "/h/hooks.json:subagent_start:2:1"; got != want {
		t.Errorf("HookKey = %s, want %s", got, want)
	}
}
