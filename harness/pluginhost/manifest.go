package pluginhost

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/yamljson"
	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/schema"
)

// ManifestFile is the name of a plugin's declaration file.
const ManifestFile = "nexus-plugin.yaml"

// maxTimeout bounds every declared timeout.
const maxTimeout = 10 * time.Minute

// maxStartTimeout bounds a plugin's start deadline: `nexus mcp` waits for
// its plugins before its first answer.
const maxStartTimeout = time.Minute

//go:embed nexus-plugin.schema.json
var schemaFS embed.FS

// SchemaURL is the $id of the manifest schema.
const SchemaURL = "https://nexus-harness.github.io/schema/nexus-plugin.schema.json"

// SchemaJSON returns the manifest's JSON Schema, as shipped.
func SchemaJSON() []byte {
	b, _ := schemaFS.ReadFile("nexus-plugin.schema.json")
	return b
}

// manifestSchema compiles the schema on first use, once per process.
var manifestSchema = newManifestSchema()

func newManifestSchema() func() *schema.Set {
	return sync.OnceValue(func() *schema.Set {
		return schema.NewSet("https://nexus-harness.github.io/schema/", schemaFS)
	})
}

// Source says where a manifest was found.
type Source string

const (
	SourceConfig  Source = "config"  // listed in nexus configuration
	SourceProject Source = "project" // <project>/.nexus/plugins/*/
	SourceUser    Source = "user"    // $XDG_CONFIG_HOME/nexus/plugins/*/
	SourceBuiltin Source = "builtin" // built by the program itself (New)
)

// FailurePolicy says what a failed hook call means.
type FailurePolicy string

const (
	FailOpen   FailurePolicy = "fail-open"   // the event proceeds
	FailClosed FailurePolicy = "fail-closed" // a pre_tool_use call is denied
)

// Duration is a time.Duration written as "500ms", "2s" or "1m".
type Duration time.Duration

// UnmarshalJSON reads the string form.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the string form.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// Manifest is a plugin's declaration (nexus-plugin.yaml).
type Manifest struct {
	Name            string                  `json:"name"`
	Version         string                  `json:"version"`
	Description     string                  `json:"description,omitempty"`
	ProtocolVersion int                     `json:"protocol_version"`
	Executable      string                  `json:"executable"`
	SHA256          string                  `json:"sha256"`
	Priority        int                     `json:"priority,omitempty"`
	StartTimeout    Duration                `json:"start_timeout,omitempty"`
	ProjectDir      bool                    `json:"project_dir,omitempty"`
	Env             []string                `json:"env,omitempty"`
	Tools           []ToolDecl              `json:"tools,omitempty"`
	Events          map[string]Subscription `json:"events,omitempty"`

	// Path is the manifest file ("" for a manifest built in code), Dir the
	// folder relative executables resolve against, Source where it was found.
	Path   string `json:"-"`
	Dir    string `json:"-"`
	Source Source `json:"-"`

	// Args are command-line arguments for the executable. Only manifests
	// built in code (SourceBuiltin) set them, e.g. to run the nexus binary
	// itself as a plugin; a YAML manifest cannot, since the digest pins the
	// executable alone. Likewise only a builtin manifest may leave SHA256
	// empty, to skip the digest check of a program nexus ships itself.
	Args []string `json:"-"`
	// BareToolNames exposes the tools under their own names instead of
	// <plugin>_<tool>. Only manifests built in code may set it: the decision
	// store serves check_decision, propose_decision, ... under the names
	// agents prompted for Nauro already use.
	BareToolNames bool `json:"-"`
	// Specs are the plugin's own descriptions of its tools, known without
	// starting it (Manager.Known): an MCP server lists them at once and
	// starts the plugin on its first call. Only manifests built in code set
	// them, for a plugin nexus ships and tests against them (the decision
	// store's, decisionsapi.ToolSpecs); a tool without a spec is learnt by
	// starting the plugin, as a discovered plugin's are.
	Specs []sdk.ToolSpec `json:"-"`
}

// exposedName is the name a tool is served under.
func (m *Manifest) exposedName(tool string) string {
	if m.BareToolNames && (m.Source == SourceBuiltin || m.Source == "") {
		return tool
	}
	return QualifiedName(m.Name, tool)
}

// ExposedName is the name the tool is served under: <plugin>_<tool>, or
// the tool's own name for a built-in plugin with BareToolNames.
func (m *Manifest) ExposedName(tool string) string { return m.exposedName(tool) }

// Compiled on first use: a hook process that never checks a name must not
// pay for them.
var (
	pluginNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })
	toolNameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`) })
)

// ValidToolName reports whether a tool name is one nexus accepts
// (^[a-z][a-z0-9_]{0,47}$); ToolNamePattern is that expression.
func ValidToolName(name string) bool { return toolNameRE().MatchString(name) }

// ToolNamePattern is the expression tool names must match.
const ToolNamePattern = `^[a-z][a-z0-9_]{0,47}$`

// checkBuiltin validates a manifest built in code, which did not go through
// the schema.
func (m *Manifest) checkBuiltin() error {
	var probs []string
	if !pluginNameRE().MatchString(m.Name) {
		probs = append(probs, fmt.Sprintf("name %q does not match %s", m.Name, pluginNameRE()))
	}
	if m.ProtocolVersion != sdk.ProtocolVersion {
		probs = append(probs, fmt.Sprintf("protocol_version %d is not %d", m.ProtocolVersion, sdk.ProtocolVersion))
	}
	if m.Executable == "" || (!filepath.IsAbs(m.Executable) && m.Dir == "") {
		probs = append(probs, "executable must be an absolute path, or relative with Dir set")
	}
	for _, t := range m.Tools {
		if !ValidToolName(t.Name) {
			probs = append(probs, fmt.Sprintf("tool name %q does not match %s", t.Name, ToolNamePattern))
		}
	}
	for _, s := range m.Specs {
		if !slices.ContainsFunc(m.Tools, func(t ToolDecl) bool { return t.Name == s.Name }) {
			probs = append(probs, fmt.Sprintf("a spec describes tool %q, which the manifest does not declare", s.Name))
		}
	}
	for e, s := range m.Events {
		if !sdk.EventName(e).Known() {
			probs = append(probs, fmt.Sprintf("unknown event %q", e))
		}
		if s.Timeout <= 0 || (s.OnFailure != FailOpen && s.OnFailure != FailClosed) {
			probs = append(probs, fmt.Sprintf("event %s needs a positive timeout and on_failure fail-open or fail-closed", e))
		}
	}
	for _, p := range m.check() {
		probs = append(probs, fieldName(p.ptr)+": "+p.msg)
	}
	if len(probs) > 0 {
		return fmt.Errorf("built-in plugin %q: %s", m.Name, strings.Join(probs, "; "))
	}
	return nil
}

// ToolDecl declares one tool.
type ToolDecl struct {
	Name              string   `json:"name"`
	CapabilityClasses []string `json:"capability_classes"`
	Timeout           Duration `json:"timeout,omitempty"`
}

// Subscription is a plugin's subscription to one event.
type Subscription struct {
	Timeout   Duration      `json:"timeout"`
	OnFailure FailurePolicy `json:"on_failure"`
	// Tools, for pre_tool_use and post_tool_use, limits the subscription to
	// tool names matching one of these path.Match patterns.
	Tools []string `json:"tools,omitempty"`
}

// StartDeadline is how long the plugin may take to start (launch,
// handshake, Info and Configure): its start_timeout, else def.
func (m *Manifest) StartDeadline(def time.Duration) time.Duration {
	if m.StartTimeout > 0 {
		return time.Duration(m.StartTimeout)
	}
	if def <= 0 {
		return DefaultStartTimeout
	}
	return def
}

// ExecutablePath is the absolute path of the program to run.
func (m *Manifest) ExecutablePath() string {
	if filepath.IsAbs(m.Executable) {
		return filepath.Clean(m.Executable)
	}
	return filepath.Join(m.Dir, filepath.FromSlash(m.Executable))
}

// EventNames lists the subscribed events in lifecycle order.
func (m *Manifest) EventNames() []string {
	var out []string
	for _, e := range sdk.EventNames() {
		if _, ok := m.Events[string(e)]; ok {
			out = append(out, string(e))
		}
	}
	return out
}

// Matches reports whether the subscription covers a call to toolName.
func (s Subscription) Matches(toolName string) bool {
	if len(s.Tools) == 0 {
		return true
	}
	for _, p := range s.Tools {
		if ok, _ := path.Match(p, toolName); ok {
			return true
		}
	}
	return false
}

// ManifestError lists everything wrong with one manifest, each line naming
// the file, the position and the field.
type ManifestError struct {
	Path     string
	Problems []string // "line:col: field: message"
}

func (e *ManifestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid plugin manifest %s:", e.Path)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(e.Path)
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// LoadManifest reads, validates and decodes one manifest file (read
// beneath its plugin's folder, see readManifest).
func LoadManifest(file string) (*Manifest, error) {
	data, err := readManifest(file)
	var tl *safefile.TooLargeError
	if errors.As(err, &tl) {
		return nil, &ManifestError{Path: file, Problems: []string{fmt.Sprintf("1:1: (file): larger than %d bytes; a manifest is a short declaration", maxManifestSize)}}
	}
	if err != nil {
		return nil, fmt.Errorf("read plugin manifest: %w", err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("plugin manifest %s: %w", file, err)
	}
	return ParseManifest(abs, data)
}

// readManifest reads a manifest beneath its plugin's folder (a symlink
// in its place is followed only while it stays in that folder), only when
// it is a regular file, through maxManifestSize.
func readManifest(file string) ([]byte, error) {
	return safefile.Read(filepath.Dir(file), filepath.Base(file), maxManifestSize)
}

// ParseManifest validates and decodes manifest text; file names it in
// errors and its folder anchors a relative executable.
func ParseManifest(file string, data []byte) (*Manifest, error) {
	doc, err := yamljson.Decode(data)
	if err != nil {
		var se *yamljson.SyntaxError
		if errors.As(err, &se) {
			return nil, &ManifestError{Path: file, Problems: []string{fmt.Sprintf("%d:%d: (file): %s", se.Pos.Line, se.Pos.Col, se.Msg)}}
		}
		return nil, &ManifestError{Path: file, Problems: []string{"1:1: (file): " + err.Error()}}
	}
	if doc.Value == nil {
		return nil, &ManifestError{Path: file, Problems: []string{"1:1: (file): empty; expected a mapping with name, version, protocol_version, executable and sha256"}}
	}
	probs, err := manifestSchema().Validate("nexus-plugin.schema.json", doc.Value)
	if err != nil {
		return nil, fmt.Errorf("plugin manifest schema: %w", err) // a bug in the shipped schema
	}
	if len(probs) > 0 {
		me := &ManifestError{Path: file}
		for _, p := range probs {
			if p.Kind == schema.KindAdditionalProperties && len(p.Properties) > 0 {
				// At each unknown key's own line, not its parent's.
				for _, k := range p.Properties {
					me.Problems = append(me.Problems, at(doc, p.Pointer+"/"+escapePointer(k), "unknown key; see the manifest's fields in docs/plugins.md"))
				}
				continue
			}
			me.Problems = append(me.Problems, at(doc, p.Pointer, p.Message))
		}
		return nil, me
	}
	raw, err := json.Marshal(doc.Value)
	if err != nil {
		return nil, fmt.Errorf("plugin manifest %s: %w", file, err)
	}
	m := &Manifest{}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, &ManifestError{Path: file, Problems: []string{"1:1: (file): " + err.Error()}}
	}
	m.Path = file
	m.Dir = filepath.Dir(file)
	if probs := m.check(); len(probs) > 0 {
		me := &ManifestError{Path: file}
		for _, p := range probs {
			me.Problems = append(me.Problems, at(doc, p.ptr, p.msg))
		}
		return nil, me
	}
	return m, nil
}

type problem struct{ ptr, msg string }

// check holds the rules JSON Schema cannot say.
func (m *Manifest) check() []problem {
	var out []problem
	if len(m.Tools) == 0 && len(m.Events) == 0 {
		out = append(out, problem{"", "declares neither tools nor events; a plugin needs at least one"})
	}
	if !filepath.IsAbs(m.Executable) && !filepath.IsLocal(filepath.FromSlash(m.Executable)) {
		out = append(out, problem{"/executable", fmt.Sprintf("%q leaves the plugin's folder; use a path inside it or an absolute path", m.Executable)})
	}
	if time.Duration(m.StartTimeout) > maxStartTimeout {
		out = append(out, problem{"/start_timeout", fmt.Sprintf("%s is longer than the maximum %s", time.Duration(m.StartTimeout), maxStartTimeout)})
	}
	seen := map[string]bool{}
	for i, t := range m.Tools {
		if seen[t.Name] {
			out = append(out, problem{fmt.Sprintf("/tools/%d/name", i), fmt.Sprintf("tool %q is declared twice", t.Name)})
		}
		seen[t.Name] = true
		if time.Duration(t.Timeout) > maxTimeout {
			out = append(out, problem{fmt.Sprintf("/tools/%d/timeout", i), fmt.Sprintf("%s is longer than the maximum %s", time.Duration(t.Timeout), maxTimeout)})
		}
	}
	names := make([]string, 0, len(m.Events))
	for e := range m.Events {
		names = append(names, e)
	}
	sort.Strings(names)
	for _, e := range names {
		s := m.Events[e]
		if time.Duration(s.Timeout) > maxTimeout {
			out = append(out, problem{"/events/" + e + "/timeout", fmt.Sprintf("%s is longer than the maximum %s", time.Duration(s.Timeout), maxTimeout)})
		}
		if len(s.Tools) > 0 && !isToolEvent(e) {
			out = append(out, problem{"/events/" + e + "/tools", "only pre_tool_use and post_tool_use carry a tool name; remove tools here"})
		}
		for i, p := range s.Tools {
			if _, err := path.Match(p, ""); err != nil {
				out = append(out, problem{fmt.Sprintf("/events/%s/tools/%d", e, i), fmt.Sprintf("bad pattern %q: %v", p, err)})
			}
		}
	}
	return out
}

// at renders "line:col: field: message" for a JSON pointer.
func at(doc *yamljson.Doc, ptr, msg string) string {
	pos := doc.PosOf(ptr)
	return fmt.Sprintf("%d:%d: %s: %s", pos.Line, pos.Col, fieldName(ptr), msg)
}

// escapePointer escapes a key for a JSON pointer.
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// fieldName turns "/tools/0/name" into "tools[0].name".
func fieldName(ptr string) string {
	if ptr == "" {
		return "(top level)"
	}
	var b strings.Builder
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
