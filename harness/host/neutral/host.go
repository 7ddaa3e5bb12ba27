package neutral

import (
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// Name is the neutral host's name (--host neutral).
const Name = "neutral"

// Host is any host wired to nexus through a shim that speaks nexus-core's
// abstract events: it has no capability map (its events name their tools'
// classes), no text budget and no tools of its own nexus knows.
type Host struct{}

// Name implements host.Host.
func (Host) Name() string { return Name }

// HarnessID implements host.Host: the configured default.
func (Host) HarnessID() string { return "" }

// Codec implements host.Host.
func (Host) Codec() host.Codec { return codec{} }

// ProjectDir implements host.Host: the events' working directory decides.
func (Host) ProjectDir(func(string) string) string { return "" }

// Profile implements host.Host: a host nexus knows nothing of.
func (Host) Profile(host.Env) lifecycle.HostProfile { return lifecycle.HostProfile{Name: Name} }

type codec struct{}

func (codec) Decode(d []byte, ev string) (string, lifecycle.Event, error) { return Decode(d, ev) }
func (codec) Encode(_ string, r lifecycle.Reply) ([]byte, error)          { return Encode(r) }
func (codec) Gated(hostEvent string) bool {
	n, _ := lifecycle.CanonicalName(hostEvent)
	return n == lifecycle.PreToolUse
}
func (codec) FailClosed(problem string) []byte { return FailClosed(problem) }
func (codec) Unreadable(problem string) []byte { return Unreadable(problem) }
func (codec) Unjudged(problem string) []byte   { return Unjudged(problem) }
func (codec) PeekEvent(data []byte) string     { return PeekEvent(data) }
