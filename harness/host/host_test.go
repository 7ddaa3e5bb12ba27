package host_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	hostpkg "github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

type recorder struct{ logs []string }

func (r *recorder) log(_ context.Context, event string, _ lifecycle.Event, msg string) {
	r.logs = append(r.logs, event+": "+msg)
}

func run(t *testing.T, host, event, payload, policy string, engine func(context.Context, lifecycle.Event) (*lifecycle.Engine, error)) (string, string, *recorder) {
	t.Helper()
	h, err := hosts.Lookup(host)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	var out, errb bytes.Buffer
	r := hostpkg.Runner{Codec: h.Codec(), Event: event, Engine: engine, Policy: func() string { return policy }, FallbackLog: rec.log, Stderr: &errb}
	var in io.Reader = strings.NewReader(payload)
	if strings.HasPrefix(payload, "\x00unreadable") {
		in = io.MultiReader(strings.NewReader(`{"hook_event_name":"PreToolUse"`), iotest.ErrReader(errors.New("broken pipe")))
	}
	if code := r.Run(context.Background(), in, &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return out.String(), errb.String(), rec
}

func noEngine(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
	return nil, errors.New("nexus-core distribution not found\n(looked in 3 places)")
}

func TestFailurePolicy(t *testing.T) {
	big := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", hostpkg.MaxPayload) + `"}}`
	for _, tt := range []struct {
		name, host, event, payload, policy string
		engine                             func(context.Context, lifecycle.Event) (*lifecycle.Engine, error)
		deny                               bool
		stderr                             string
	}{
		{"invalid json, open", "claude", "", `{"hook_event_name":`, "fail-open", noEngine, false, "invalid JSON payload"},
		{"invalid json on the gate, open", "claude", "PreToolUse", `{{`, "fail-open", noEngine, true, "invalid JSON payload"},
		{"invalid json on the gate, closed", "claude", "PreToolUse", `{{`, "fail-closed", noEngine, true, "invalid JSON payload"},
		{"invalid json naming the gate, open", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":}`, "fail-open", noEngine, true, "invalid JSON payload"},
		{"too deep naming the gate, open", "claude", "", `{"hook_event_name":"PreToolUse","x":` + strings.Repeat("[", 20000) + `}`, "fail-open", noEngine, true, "limit of 64 levels"},
		{"too deep, observing event, open", "claude", "", `{"hook_event_name":"PostToolUse","x":` + strings.Repeat("[", 100) + `}`, "fail-open", noEngine, false, "limit of 64 levels"},
		{"too big, open", "claude", "PreToolUse", big, "fail-open", noEngine, true, "payload over 10 MiB"},
		{"too big, event from its start, open", "claude", "", big, "fail-open", noEngine, true, "payload over 10 MiB"},
		{"unreadable stdin, open", "claude", "PreToolUse", "\x00unreadable", "fail-open", noEngine, true, "read stdin"},
		{"observing event, closed", "claude", "PostToolUse", `{{`, "fail-closed", noEngine, false, "invalid JSON payload"},
		{"unknown event, closed", "claude", "", `{"hook_event_name":"Notification"}`, "fail-closed", noEngine, false, "unknown Claude Code hook event"},
		{"too big, closed", "claude", "PreToolUse", big, "fail-closed", noEngine, true, "payload over 10 MiB"},
		{"no engine, open", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-open", noEngine, true, "distribution not found; (looked in 3 places)"},
		{"no engine, observing event, open", "claude", "", `{"hook_event_name":"PostToolUse","tool_name":"Edit"}`, "fail-open", noEngine, false, "distribution not found"},
		{"neutral no engine, open", "neutral", "", `{"event":"pre_tool_use","tool":"apply_patch"}`, "fail-open", noEngine, true, "distribution not found"},
		{"no engine, closed", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-closed", noEngine, true, "distribution not found"},
		{"panic, closed", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-closed", func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) { panic("boom") }, true, "internal error: boom"},
		{"neutral mistyped, closed", "neutral", "", `{"event":"pre_tool_use","tool":1}`, "fail-closed", noEngine, true, "wrong type"},
		{"neutral missing field, open", "neutral", "", `{"event":"pre_tool_use"}`, "fail-open", noEngine, true, "field tool is required"},
		{"neutral too deep, open", "neutral", "", `{"event":"pre_tool_use","tool_input":{"x":` + strings.Repeat("[", 70) + `}}`, "fail-open", noEngine, true, "limit of 64 levels"},
		{"panic, open", "claude", "", `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, "fail-open", func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) { panic("boom") }, false, "internal error: boom"},
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
			// An unreadable call, or one with no engine to check it, is
			// denied as such whatever the policy; nexus failing while it
			// handles the call is the policy's denial.
			if tt.deny && tt.policy == "fail-open" && !strings.Contains(out, "could not read the call") && !strings.Contains(out, "could not load what it checks") {
				t.Errorf("stdout %q does not say why the call could not be checked", out)
			}
			if !tt.deny && out != "" {
				t.Errorf("fail-open wrote %q", out)
			}
		})
	}
	if _, err := hosts.Lookup("vscode"); err == nil {
		t.Error("unknown host accepted")
	}
}

// TestPayloadLimitBoundary: a payload of hostpkg.MaxPayload-1 or hostpkg.MaxPayload bytes
// is decoded; one byte more is refused as too big.
func TestPayloadLimitBoundary(t *testing.T) {
	head := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"`
	tail := `"}}`
	for _, n := range []int{hostpkg.MaxPayload - 1, hostpkg.MaxPayload, hostpkg.MaxPayload + 1} {
		payload := head + strings.Repeat("x", n-len(head)-len(tail)) + tail
		_, errOut, _ := run(t, "claude", "PreToolUse", payload, "fail-open", noEngine)
		tooBig := strings.Contains(errOut, "payload over")
		if tooBig != (n > hostpkg.MaxPayload) {
			t.Errorf("%d bytes (limit %d): %q", n, hostpkg.MaxPayload, errOut)
		}
	}
}
