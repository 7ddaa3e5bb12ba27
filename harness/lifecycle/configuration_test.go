package lifecycle

import (
	"strings"
	"testing"
)

// TestConfigNotice: the configuration's problems reach the user (Notice)
// on session start and on the first event after they change, once per
// identity, and Lead (Context) on session start; without problems nothing
// is said, and the gate keeps working.
func TestConfigNotice(t *testing.T) {
	problem := "/p/.nexus/nexus.yaml:2:3: gate.unplaned_edit: unknown configuration key; so it is ignored: gate.unplanned_edit stays deny (the default)"
	notice := ConfigNotice{Problems: []string{problem}, Identity: "one"}
	e, s := newEngine(t, Options{Host: testHost("", ""), Config: notice})
	write := Event{Name: PreToolUse, Tool: "Write", ToolInput: map[string]any{"file_path": "a.txt"}}

	// The first event after the problem appeared (before any session).
	r := handle(t, e, write)
	if r.Decision != "deny" || !strings.Contains(r.Notice, problem) || !strings.Contains(r.Notice, "1 configuration problem") {
		t.Fatalf("first event: %+v", r)
	}
	if r := handle(t, e, write); r.Notice != "" || r.Decision != "deny" {
		t.Errorf("shown twice for one identity: %+v", r)
	}
	// Session start: always, to the user and to Lead.
	r = handle(t, e, Event{Name: SessionStart, SessionID: "s", Source: "startup"})
	if !strings.Contains(r.Notice, problem) || !strings.Contains(r.Context, problem) {
		t.Errorf("session start: %+v", r)
	}
	if r := handle(t, e, Event{Name: UserMessage, Prompt: "hi"}); r.Notice != "" {
		t.Errorf("after session start: %+v", r)
	}
	// The file changed: a new identity is shown once more, beside the
	// event's own notice.
	e2, _ := newEngine(t, Options{Host: testHost("", ""), Store: s, Config: ConfigNotice{Problems: []string{problem, "NEXUS_GATE_POLICY: bad"}, Identity: "two"}})
	r = handle(t, e2, Event{Name: UserMessage, Prompt: "[rule:x] keep it"})
	if !strings.HasPrefix(r.Notice, "nexus: 2 configuration problems: ") || !strings.Contains(r.Notice, "saved the rule") {
		t.Errorf("after a change: %q", r.Notice)
	}
	// No problems: nothing is said, nothing is read or written for it.
	e3, s3 := newEngine(t, Options{Host: testHost("", "")})
	if r := handle(t, e3, write); r.Notice != "" {
		t.Errorf("without problems: %+v", r)
	}
	if _, err := s3.L.ReadFile(e3.configShownPath(), 0); err == nil {
		t.Error("config-notice.json written without problems")
	}
}
