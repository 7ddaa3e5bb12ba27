// Package host is what nexus asks of a coding-agent host (Host, Codec) and
// runs one hook invocation for any of them (Runner): read one event
// (bounded), decode it, hand it to the lifecycle engine, encode the reply,
// and apply nexus's failure policy.
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
//   - No engine — the distribution could not be loaded — leaves nothing to
//     judge with: no agent's capabilities are known. A repository can ship
//     one broken (a node_modules distribution, a .nexus leading out of the
//     project), so for the tool gate that too is a denial naming the
//     problem, whatever gate.policy says. Other events fail open. (A
//     configuration problem never gets here: the composition root leaves
//     out what does not load, a key or a whole file, and the lifecycle
//     engine tells the session; see lifecycle.ConfigNotice.)
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

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// MaxPayload bounds one hook payload.
const MaxPayload = 10 << 20

// Host is a coding-agent host nexus serves: what `nexus hook --host NAME`
// needs from it. Each host package (harness/host/<name>) implements it;
// the registry (harness/host/hosts) lists them by name for the composition
// root (harness/compose), which builds every door from them. What the
// other doors need from a host is asked at the door, through interfaces of
// their own: installing nexus into the host (harness/install.Installer),
// the doctor's checks of the host's setup (harness/doctor.HostChecker).
type Host interface {
	// Name is the host's name on the command line (--host claude).
	Name() string
	// HarnessID is the harness id the host's state lives under when the
	// configuration sets none (harness.id), "" for the configured default.
	HarnessID() string
	// Codec speaks the host's hook protocol: one payload, one event (nil
	// for a host whose hooks arrive as a stream of requests: Server).
	Codec() Codec
	// ProjectDir is the project the host names for its hooks (in its own
	// environment, read through getenv), "" when it names none; the event's
	// working directory decides then.
	ProjectDir(getenv func(string) string) string
	// Profile describes the host to the lifecycle engine (capability map,
	// wording, text budget, spawn and skill tools) for one session in env.
	Profile(env Env) lifecycle.HostProfile
}

// Server is a host whose plugin keeps nexus running beside it and sends
// its hooks as a stream of requests, each of which may mean several
// lifecycle events or none (OpenCode): `nexus hook --host NAME` hands it
// its standard input and output instead of running one invocation. r
// carries the engine, gate.policy, the fallback log and stderr; its Codec
// and Event are unused. The failure policy is the package doc's, per
// request.
type Server interface {
	// ServeHooks answers the requests read from in, each with its reply
	// on out, in order: until in ends when serve is set (a long-lived
	// child, which keeps one engine for the project), else the first
	// request only.
	ServeHooks(ctx context.Context, in io.Reader, out io.Writer, r Runner, serve bool) error
}

// Env is where a host's session runs.
type Env struct {
	// Project is the project root; Home the user's home folder.
	Project, Home string
	// Getenv reads the hook's environment (nil: none).
	Getenv func(string) string
	// Variant is the host's own variant of its setup, named on the hook's
	// command line ("" = the usual one; Claude Code's "plugin" is the nexus
	// plugin package, whose agents, skills and tools carry its names).
	Variant string
}

// Codec translates one host's hook protocol: one payload in, one reply out.
type Codec interface {
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
	// check with, the distribution not loading (whatever gate.policy says).
	Unjudged(problem string) []byte
	// PeekEvent names the host event of a payload Decode refused, read
	// without decoding it ("" when it does not say).
	PeekEvent(data []byte) string
}

// failure is what kind of failure a hook met (see the package doc).
type failure int

const (
	failed     failure = iota // nexus failed while handling: gate.policy decides
	unreadable                // the payload could not be read: the gate denies
	unjudged                  // no engine to check with: the gate denies
)

// Runner runs hook invocations: one per process (Run), or one per line of
// a long-lived connection, for a host that keeps nexus running beside it
// (Handle is the whole of one invocation).
type Runner struct {
	Codec Codec
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

// Run handles one invocation read from stdin and returns the process exit
// code (always 0: a hook never blocks the host by failing; a denial is a
// reply).
func (r Runner) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) (code int) {
	data, err := io.ReadAll(io.LimitReader(stdin, MaxPayload+1))
	if err != nil {
		r.write(stdout, r.fail(ctx, data, r.Event, lifecycle.Event{}, nil, fmt.Errorf("read stdin: %w", err), unreadable))
		return 0
	}
	r.write(stdout, r.Handle(ctx, data))
	return 0
}

func (r Runner) write(w io.Writer, out []byte) {
	if len(out) > 0 {
		_, _ = w.Write(out)
	}
}

// Handle runs one invocation whose payload is data and returns the host's
// reply (nil: nothing to say). Failures follow the policy above.
func (r Runner) Handle(ctx context.Context, data []byte) (out []byte) {
	hostEvent := r.Event
	var ev lifecycle.Event
	var engine *lifecycle.Engine
	defer func() {
		if p := recover(); p != nil {
			out = r.fail(ctx, data, hostEvent, ev, engine, fmt.Errorf("internal error: %v", p), failed)
		}
	}()
	if len(data) > MaxPayload {
		return r.fail(ctx, data, hostEvent, ev, nil, fmt.Errorf("payload over %d MiB; nexus reads at most %d bytes", MaxPayload>>20, MaxPayload), unreadable)
	}
	// Decode bounds the payload's depth before anything is decoded.
	var err error
	hostEvent, ev, err = r.Codec.Decode(data, r.Event)
	if err != nil {
		return r.fail(ctx, data, hostEvent, ev, nil, err, unreadable)
	}
	if engine, err = r.Engine(ctx, ev); err != nil {
		return r.fail(ctx, data, hostEvent, ev, nil, err, unjudged)
	}
	reply, err := engine.Handle(ctx, ev)
	if err != nil {
		return r.fail(ctx, data, hostEvent, ev, engine, err, failed)
	}
	out, err = r.Codec.Encode(hostEvent, reply)
	if err != nil {
		return r.fail(ctx, data, hostEvent, ev, engine, err, failed)
	}
	return out
}

// fail reports a failure of the given kind (stderr, nexus.log) and
// returns the host's reply to it.
func (r Runner) fail(ctx context.Context, data []byte, hostEvent string, ev lifecycle.Event, engine *lifecycle.Engine, err error, kind failure) []byte {
	msg := oneLine(err.Error())
	if kind == unreadable && hostEvent == "" {
		hostEvent = r.Codec.PeekEvent(data)
	}
	fmt.Fprintf(r.Stderr, "nexus hook: %s\n", msg)
	switch {
	case engine != nil:
		engine.Log().Log(ctx, "error", eventLabel(hostEvent, ev), ev.AgentID, msg)
	case r.FallbackLog != nil:
		r.FallbackLog(ctx, eventLabel(hostEvent, ev), ev, msg)
	}
	if hostEvent == "" || !r.Codec.Gated(hostEvent) {
		return nil
	}
	switch {
	case kind == unreadable:
		return r.Codec.Unreadable(msg)
	case kind == unjudged:
		return r.Codec.Unjudged(msg)
	case r.Policy != nil && r.Policy() == "fail-closed":
		return r.Codec.FailClosed(msg)
	}
	return nil
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
