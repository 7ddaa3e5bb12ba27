package harness

import (
	"strings"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// CallerRole turns how a tool call names its caller (an agent type such as
// "architect" or "nexus:architect", "lead", or "") into the role the
// capability gate checks: "" is Lead. ok is false for a name that holds no
// role, whose calls cannot be gated as anyone's.
func CallerRole(agentType string) (role string, ok bool) {
	if agentType == "" || strings.EqualFold(agentType, gate.LeadKey) {
		return "", true
	}
	r := lifecycle.BareRole(agentType)
	return r, r != ""
}
