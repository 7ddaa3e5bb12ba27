// Package host runs one hook invocation for any host adapter: read one
// event from stdin (bounded), decode it, hand it to the lifecycle engine,
// encode the reply, and apply nexus's failure policy.
//
// Failure policy. Every failure produces one line on stderr and one line
// in .nexus/state/<harness-id>/nexus.log (no stack trace, ever), and then:
//
//   - A payload nexus cannot read — stdin unreadable, over MaxPayload,
//     nested deeper than jsonscan.MaxDepth, not JSON, an unknown event, a
//     missing or mistyped field, a number no float64 holds, tool_input that
//     is not an object — cannot be judged. For the tool gate (PreToolUse /
//     pre_tool_use) that is a denial naming the problem, whatever
//     gate.policy says: a tool call nexus cannot check never runs. Other
//     events get the host's fail-open reply (exit 0, nothing on stdout).
//   - No engine — the configuration or the distribution could not be
//     loaded — leaves nothing to judge with: no agent's capabilities are
//     known. A repository can ship either broken (a .nexus/nexus.yaml that
//     is not YAML, a FIFO, a node_modules distribution), so for the tool
//     gate that too is a denial naming the problem, whatever gate.policy
//     says. Other events fail open.
//   - nexus failing itself while handling the event — an engine error, a
//     panic — is what gate.policy decides for the tool gate: fail-open
//     (the default) lets the call through, fail-closed denies it naming
//     the problem. Other events fail open.
//
// State files are only ever replaced whole (internal/state), so a failure
// cannot leave one half-written.
package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/host/neutral"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// MaxPayload bounds one hook payload.
const MaxPayload = 10 << 20

// Adapter translates one host's protocol.
type Adapter interface {
	Name() string
	// Decode parses a payload; event is the event named on the command
	// line ("" = from the payload). It returns the host's event name.
	Decode(data []byte, event string) (string, lifecycle.Event, error)
	// Encode renders a reply (nil = print nothing).
	Encode(hostEvent string, r lifecycle.Reply) ([]byte, error)
	// Gated reports whether the host event is the tool gate.
	Gated(hostEvent string) bool
	// FailClosed renders the denial sent when nexus failed on the gate
	// and gate.policy is fail-closed.
	FailClosed(problem string) []byte
	// Unreadable renders the denial of a tool call whose payload nexus
	// could not read (whatever gate.policy says).
	Unreadable(problem string) []byte
	// Unjudged renders the denial of a tool call nexus had no engine to
	// check with (whatever gate.policy says).
	Unjudged(problem string) []byte
	// PeekEvent names the host event of a payload Decode refused, read
	// without decoding it ("" when it does not say).
	PeekEvent(data []byte) string
}

// For returns the adapter of a host: "claude" or "neutral".
func For(name string) (Adapter, error) {
	switch name {
	case "claude":
		return claudeAdapter{}, nil
	case "neutral":
		return neutralAdapter{}, nil
	}
	return nil, fmt.Errorf("unknown host %q: use --host claude or --host neutral", name)
}

type claudeAdapter struct{}

func (claudeAdapter) Name() string { return "claude" }
func (claudeAdapter) Decode(d []byte, ev string) (string, lifecycle.Event, error) {
	return claude.Decode(d, ev)
}
func (claudeAdapter) Encode(hostEvent string, r lifecycle.Reply) ([]byte, error) {
	return claude.Encode(hostEvent, r)
}
func (claudeAdapter) Gated(hostEvent string) bool      { return claude.Gated(hostEvent) }
func (claudeAdapter) FailClosed(problem string) []byte { return claude.FailClosed(problem) }
func (claudeAdapter) Unreadable(problem string) []byte { return claude.Unreadable(problem) }
func (claudeAdapter) Unjudged(problem string) []byte   { return claude.Unjudged(problem) }
func (claudeAdapter) PeekEvent(data []byte) string     { return claude.PeekEvent(data) }

type neutralAdapter struct{}

func (neutralAdapter) Name() string { return "neutral" }
func (neutralAdapter) Decode(d []byte, ev string) (string, lifecycle.Event, error) {
	return neutral.Decode(d, ev)
}
func (neutralAdapter) Encode(_ string, r lifecycle.Reply) ([]byte, error) { return neutral.Encode(r) }
func (neutralAdapter) Gated(hostEvent string) bool {
	n, _ := lifecycle.CanonicalName(hostEvent)
	return n == lifecycle.PreToolUse
}
func (neutralAdapter) FailClosed(problem string) []byte { return neutral.FailClosed(problem) }
func (neutralAdapter) Unreadable(problem string) []byte { return neutral.Unreadable(problem) }
func (neutralAdapter) Unjudged(problem string) []byte   { return neutral.Unjudged(problem) }
func (neutralAdapter) PeekEvent(data []byte) string     { return neutral.PeekEvent(data) }

// failure is what kind of failure a hook met (see the package doc).
type failure int

const (
	failed     failure = iota // nexus failed while handling: gate.policy decides
	unreadable                // the payload could not be read: the gate denies
	unjudged                  // no engine to check with: the gate denies
)

// Runner runs one hook invocation.
type Runner struct {
	Adapter Adapter
	// Event is the event named on the command line ("" = from the payload).
	Event string
	// Engine builds the lifecycle engine for a decoded event (the project
	// root may come from the event's working directory).
	Engine func(ctx context.Context, ev lifecycle.Event) (*lifecycle.Engine, error)
	// Policy returns gate.policy ("fail-open" or "fail-closed"); it is
	// asked only when something failed.
	Policy func() string
	// FallbackLog writes nexus.log when no engine could be built.
	// event is the best name known for the event.
	FallbackLog func(ctx context.Context, event string, ev lifecycle.Event, msg string)
	Stderr      io.Writer
}

// Run handles one invocation and returns the process exit code (always 0:
// a hook never blocks the host by failing; a denial is a reply).
func (r Runner) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) (code int) {
	hostEvent := r.Event
	var ev lifecycle.Event
	var engine *lifecycle.Engine
	var data []byte
	// fail reports a failure of the given kind.
	fail := func(err error, kind failure) {
		msg := oneLine(err.Error())
		if kind == unreadable && hostEvent == "" {
			hostEvent = r.Adapter.PeekEvent(data)
		}
		fmt.Fprintf(r.Stderr, "nexus hook: %s\n", msg)
		switch {
		case engine != nil:
			engine.Log().Log(ctx, "error", eventLabel(hostEvent, ev), ev.AgentID, msg)
		case r.FallbackLog != nil:
			r.FallbackLog(ctx, eventLabel(hostEvent, ev), ev, msg)
		}
		if hostEvent == "" || !r.Adapter.Gated(hostEvent) {
			return
		}
		switch {
		case kind == unreadable:
			_, _ = stdout.Write(r.Adapter.Unreadable(msg))
		case kind == unjudged:
			_, _ = stdout.Write(r.Adapter.Unjudged(msg))
		case r.Policy != nil && r.Policy() == "fail-closed":
			_, _ = stdout.Write(r.Adapter.FailClosed(msg))
		}
	}
	defer func() {
		if p := recover(); p != nil {
			fail(fmt.Errorf("internal error: %v", p), failed)
			code = 0
		}
	}()

	data, err := io.ReadAll(io.LimitReader(stdin, MaxPayload+1))
	if err != nil {
		fail(fmt.Errorf("read stdin: %w", err), unreadable)
		return 0
	}
	if len(data) > MaxPayload {
		fail(fmt.Errorf("payload over %d MiB; nexus reads at most %d bytes", MaxPayload>>20, MaxPayload), unreadable)
		return 0
	}
	// Decode bounds the payload's depth before anything is decoded.
	hostEvent, ev, err = r.Adapter.Decode(data, r.Event)
	if err != nil {
		fail(err, unreadable)
		return 0
	}
	if engine, err = r.Engine(ctx, ev); err != nil {
		fail(err, unjudged)
		return 0
	}
	reply, err := engine.Handle(ctx, ev)
	if err != nil {
		fail(err, failed)
		return 0
	}
	out, err := r.Adapter.Encode(hostEvent, reply)
	if err != nil {
		fail(err, failed)
		return 0
	}
	if len(out) > 0 {
		_, _ = stdout.Write(out)
	}
	return 0
}

func eventLabel(hostEvent string, ev lifecycle.Event) string {
	if ev.Name != "" {
		return ev.Name
	}
	return hostEvent
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	var b bytes.Buffer
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(line)
		}
	}
	return b.String()
}
