package gate

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// nexusYAML is the capability map of nexus's own MCP tools, which every
// host shares (see the comments inside it). A host's map of its own tools
// lives in its package (harness/host/<host>) and reaches the gate through
// Options.HostMap. The binary carries the YAML as documentation of what it
// enforces; hooks use the table generated from it (capmap_gen.go), checked
// equal by a test.
//
//go:embed nexus.yaml
var nexusYAML []byte

// Shell dialects.
const (
	DialectPOSIX  = "posix"
	DialectOpaque = "opaque"
)

// Semantic classes nexus uses beyond nexus-core's blocked ones.
const (
	// ClassFileRead marks tools whose successful call reads a file's
	// contents (memory read observation).
	ClassFileRead = "file_read"
	// ClassArtifactWrite marks artifact_write, exempt from the unplanned-edit rule.
	ClassArtifactWrite = "artifact_write"
)

// fileWriteClasses are the classes of no_file_edit in nexus-core 0.10; a
// call with any of them edits workspace files (the unplanned-edit rule and
// files_touched use this set).
var fileWriteClasses = map[string]bool{
	"file_creation":            true,
	"file_modification":        true,
	"file_deletion":            true,
	"partial_file_edit":        true,
	"structured_document_edit": true,
}

// IsFileWriteClass reports whether class is one of the workspace-edit classes.
func IsFileWriteClass(class string) bool { return fileWriteClasses[class] }

// Shell says how a tool's command line is found and parsed.
type Shell struct {
	Param   string `yaml:"param"`
	Dialect string `yaml:"dialect"`
}

// ToolEntry is one tool of a capability map.
type ToolEntry struct {
	Classes    []string `yaml:"classes"`
	FileParams []string `yaml:"file_params"`
	Shell      *Shell   `yaml:"shell"`
}

// Map is a capability map: concrete tool name → classes.
type Map struct {
	Host  string                `yaml:"host"`
	Tools map[string]*ToolEntry `yaml:"tools"`
}

// ParseMap reads a capability map (YAML; name names it in errors).
func ParseMap(name string, data []byte) (*Map, error) {
	var m Map
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("capability map %s: %w", name, err)
	}
	for tool, e := range m.Tools {
		if e == nil || len(e.Classes) == 0 {
			return nil, fmt.Errorf("capability map %s: tool %s has no classes", name, tool)
		}
		if e.Shell != nil && e.Shell.Dialect != DialectPOSIX && e.Shell.Dialect != DialectOpaque {
			return nil, fmt.Errorf("capability map %s: tool %s: unknown shell dialect %q", name, tool, e.Shell.Dialect)
		}
	}
	return &m, nil
}

//go:generate go run ../../internal/gencapmap -in nexus.yaml -out capmap_gen.go -var nexusMap

// NexusMap returns the shipped map of nexus's own tools (abstract names).
// It is shared, so callers must not modify it.
func NexusMap() (*Map, error) { return nexusMap(), nil }

// union returns the sorted union of class lists.
func union(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, c := range l {
			if c != "" && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}
