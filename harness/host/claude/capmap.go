package claude

import (
	_ "embed"

	"github.com/nexus-harness/nexus/harness/gate"
)

// capabilitiesYAML is the capability map of Claude Code's built-in tools
// (see the comments inside it): the concrete tool names nexus-core leaves
// to each harness. The binary carries it as documentation of what it
// enforces; hooks use the table generated from it (capmap_gen.go), checked
// equal by a test.
//
//go:embed capabilities.yaml
var capabilitiesYAML []byte

//go:generate go run ../../../internal/gencapmap -in capabilities.yaml -out capmap_gen.go -var capabilityMap -qualifier gate.

// CapabilityMap is the capability map of Claude Code's tools, for the
// gate. It is shared, so callers must not modify it.
func CapabilityMap() *gate.Map { return capabilityMap() }
