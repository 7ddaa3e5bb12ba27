package setup

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/harness/host/opencode"
)

// PluginFile is the name of the plugin nexus writes into an OpenCode
// config folder's plugins/ (.opencode/plugins/nexus.js for a project,
// $XDG_CONFIG_HOME/opencode/plugins/nexus.js for the user): OpenCode loads
// every *.js there, with no opencode.json entry.
const PluginFile = "nexus.js"

// DefaultServeArgs and DefaultCallArgs are the nexus command lines the
// plugin runs: the long-lived child it talks to over FIFOs, and the one
// process per hook it falls back to.
var (
	DefaultServeArgs = []string{"hook", "--host", "opencode", "--serve"}
	DefaultCallArgs  = []string{"hook", "--host", "opencode"}
)

// DefaultTimeout is how long the plugin waits for one answer before it
// gives up (the tool gate then refuses the call).
const DefaultTimeout = 30 * time.Second

// ClipLength is the longest string of a tool's result the plugin
// forwards (tool.execute.after); longer ones end in Clipped. nexus reads
// a tool's result only for the task tool's report.
const ClipLength = 64 << 10

// Clipped ends a string the plugin clipped.
const Clipped = "…[clipped by the nexus plugin]"

// uncheckedFormat is the message of a tool call the plugin refuses
// because nexus did not answer (%s: why).
const uncheckedFormat = "nexus could not check this tool call (%s). A tool call nexus cannot check does not run; `nexus doctor` shows what is wrong, and `nexus install opencode` rewrites the plugin."

// PluginOptions say what the plugin runs.
type PluginOptions struct {
	// Nexus is the absolute path of the nexus executable.
	Nexus string
	// Project is the project folder nexus runs in; "" (a plugin in the
	// user's config folder) is the folder OpenCode runs in.
	Project string
	// Version is nexus's version, named in the file's header.
	Version string
	// ServeArgs and CallArgs default to DefaultServeArgs and
	// DefaultCallArgs.
	ServeArgs, CallArgs []string
	// Timeout defaults to DefaultTimeout.
	Timeout time.Duration
}

//go:embed plugin.js.tmpl
var pluginSource string

var pluginTemplate = template.Must(template.New(PluginFile).Option("missingkey=error").Parse(pluginSource))

// Plugin renders the plugin module. Every value is written as a JSON
// literal (JSON strings are JavaScript strings; encoding/json escapes
// U+2028 and U+2029), so no path or argument can break out of it.
func Plugin(o PluginOptions) ([]byte, error) {
	if !filepath.IsAbs(o.Nexus) {
		return nil, fmt.Errorf("opencode plugin: the nexus executable must be an absolute path, not %q", o.Nexus)
	}
	if o.Project != "" && !filepath.IsAbs(o.Project) {
		return nil, fmt.Errorf("opencode plugin: the project must be an absolute path, not %q", o.Project)
	}
	if o.ServeArgs == nil {
		o.ServeArgs = DefaultServeArgs
	}
	if o.CallArgs == nil {
		o.CallArgs = DefaultCallArgs
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if len(o.ServeArgs) == 0 || len(o.CallArgs) == 0 {
		return nil, errors.New("opencode plugin: empty nexus command line")
	}
	// JSON (and JavaScript) strings hold Unicode text: a path that is not
	// UTF-8 would reach the plugin changed, naming another file.
	for _, v := range append([]string{o.Nexus, o.Project}, append(o.ServeArgs, o.CallArgs...)...) {
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("opencode plugin: %q is not UTF-8 text, which a JavaScript plugin cannot name exactly; use a path of UTF-8 characters", v)
		}
	}
	lit := func(v any) string {
		b, _ := opencode.EncodeLine(v) // strings, string slices and maps of them always encode
		return string(bytes.TrimSuffix(b, []byte("\n")))
	}
	data := map[string]string{
		"Nexus":     lit(o.Nexus),
		"Project":   lit(o.Project),
		"Version":   headerSafe(o.Version),
		"ServeArgs": lit(o.ServeArgs),
		"CallArgs":  lit(o.CallArgs),
		"Hooks":     lit(opencode.Hooks),
		"Events":    lit(opencode.Events),
		"Gated":     lit([]string{opencode.HookToolBefore}),
		"Clip":      lit(map[string]int{opencode.HookToolAfter: ClipLength}),
		"Clipped":   lit(Clipped),
		"Unchecked": lit(uncheckedFormat),
		"TimeoutMS": fmt.Sprint(o.Timeout.Milliseconds()),
		"Protocol":  fmt.Sprint(opencode.ProtocolVersion),
	}
	var buf bytes.Buffer
	if err := pluginTemplate.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("opencode plugin: %w", err)
	}
	return buf.Bytes(), nil
}

// headerSafe keeps the characters a version may show in the header's
// line comment (a line terminator would end the comment).
func headerSafe(s string) string {
	var b []byte
	for i := 0; i < len(s) && len(b) < 64; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || bytes.IndexByte([]byte(".+-_()/ "), c) >= 0 {
			b = append(b, c)
		}
	}
	return string(b)
}

// Installed is what a plugin file nexus wrote runs: its nexus, its
// command lines, the protocol it speaks.
type Installed struct {
	Nexus, Project string
	ServeArgs      []string
	CallArgs       []string
	Protocol       int
}

// ReadPlugin reads the constants a plugin nexus wrote starts with (each a
// JSON literal on a line of its own, as Plugin renders them); a file that
// lacks one was not written by this plugin template.
func ReadPlugin(b []byte) (Installed, error) {
	var in Installed
	fields := map[string]any{"NEXUS": &in.Nexus, "PROJECT": &in.Project, "SERVE": &in.ServeArgs, "ONCE": &in.CallArgs, "V": &in.Protocol}
	seen := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("const "))
		if !ok {
			continue
		}
		name, lit, ok := bytes.Cut(rest, []byte(" = "))
		dst, known := fields[string(name)]
		if !ok || !known || seen[string(name)] {
			continue
		}
		if err := json.Unmarshal(lit, dst); err != nil {
			return in, fmt.Errorf("the plugin's %s is not what nexus writes (%v)", name, err)
		}
		seen[string(name)] = true
	}
	for name := range fields {
		if !seen[name] {
			return in, fmt.Errorf("the plugin has no %s: nexus did not write it, or wrote it with another template", name)
		}
	}
	return in, nil
}
