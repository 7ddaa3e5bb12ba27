package host

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

type recorder struct{ logs []string }

func (r *recorder) log(_ context.Context, event string, _ lifecycle.Event, msg string) {
	r.logs = append(r.logs, event+": "+msg)
}

func run(t *testing.T, host, event, payload, policy string, engine func(context.Context, lifecycle.Event) (*lifecycle.Engine, error)) (string, string, *recorder) {
	t.Helper()
	ad, err := For(host)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	var out, errb bytes.Buffer
	r := Runner{Adapter: ad, Event: event, Engine: engine, Policy: func() string { return policy }, FallbackLog: rec.log, Stderr: &errb}
	if code := r.Run(context.Background(), strings.NewReader(payload), &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return out.String(), errb.String(), rec
}

func noEngine(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
	return nil, errors.New("nexus-core distribution not found\n(looked in 3 places)")
}

func TestFailurePolicy(t *testing.T) {
	big := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", MaxPayload) + `"}}`
	for _, tt := range []struct {
		name, host, event, payload, policy string
		engine                             func(context.Context, lifecycle.Event) (*lifecycle.Engine, error)
		deny                               bool
		stderr                             string
	}{
		{"invalid json, open", "claude", "", `{"hook_event_name":`, "fail-open", noEngine, false, "invalid JSON payload"},
		{"invalid json on the gate, closed", "claude", "PreToolUse", `{{`, "fail-closed", noEngine, true, "invalid JSON payload"},
		{"observing event, closed", "claude", "PostToolUse", `{{`, "fail-closed", noEngine, false, "invalid JSON payload"},
		{"unknown event, closed", "claude", "", `{"hook_event_name":"Notification"}`, "fail-closed", noEngine, false, "unknown Claude Code hook event"},
		{"too big, closed", "claude", "PreToolUse", big, "fail-closed", noEngine, true, "payload over 10 MiB"},
		{"engine error, open", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-open", noEngine, false, "distribution not found; (looked in 3 places)"},
		{"engine error, closed", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-closed", noEngine, true, "distribution not found"},
		{"panic, closed", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-closed", func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) { panic("boom") }, true, "internal error: boom"},
		{"neutral mistyped, closed", "neutral", "", `{"event":"pre_tool_use","tool":1}`, "fail-closed", noEngine, true, "wrong type"},
		{"neutral missing field, open", "neutral", "", `{"event":"pre_tool_use"}`, "fail-open", noEngine, false, "field tool is required"},
		{"claude mistyped gate, closed", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":false}`, "fail-closed", noEngine, true, "field tool_name must be a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, rec := run(t, tt.host, tt.event, tt.payload, tt.policy, tt.engine)
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "nexus hook: ") || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q, want one line with %q", errOut, tt.stderr)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, ".go:") {
				t.Errorf("stack trace on stderr: %q", errOut)
			}
			if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], tt.stderr) {
				t.Errorf("log %v", rec.logs)
			}
			if tt.deny != strings.Contains(out, `"deny"`) {
				t.Errorf("stdout %q, deny %v", out, tt.deny)
			}
			if !tt.deny && out != "" {
				t.Errorf("fail-open wrote %q", out)
			}
		})
	}
	if _, err := For("vscode"); err == nil {
		t.Error("unknown host accepted")
	}
}

// TestPayloadLimitBoundary: a payload of MaxPayload-1 or MaxPayload bytes
// is decoded; one byte more is refused as too big.
func TestPayloadLimitBoundary(t *testing.T) {
	head := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"`
	tail := `"}}`
	for _, n := range []int{MaxPayload - 1, MaxPayload, MaxPayload + 1} {
		payload := head + strings.Repeat("x", n-len(head)-len(tail)) + tail
		_, errOut, _ := run(t, "claude", "PreToolUse", payload, "fail-open", noEngine)
		tooBig := strings.Contains(errOut, "payload over")
		if tooBig != (n > MaxPayload) {
			t.Errorf("%d bytes (limit %d): %q", n, MaxPayload, errOut)
		}
	}
}
