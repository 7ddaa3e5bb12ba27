// Package hot holds nexus's hot commands: `nexus hook`, `nexus statusline`
// and `nexus version`, which a host runs on every tool call and after every
// message. The small front program (cmd/nexus) runs them itself; the full
// command line (cmd/nexus-full), where every other command runs, registers
// the same code under cobra, so both behave alike. What this package
// imports is linked into every hook process: keep it to what the hot
// commands use (cmd/nexus's TestHotDeps lists what must stay out).
package hot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/internal/config"
)

// Globals are the global flags of nexus's command line, as the hot
// commands need them.
type Globals struct {
	// Project is --project ("" = not given).
	Project string
	// Flags holds the flags bound to configuration keys (FlagKeys:
	// --core → core.dir).
	Flags config.Flags
	// JSON is --json.
	JSON bool
	// Warn, when set, prints a configuration problem that does not stop
	// the command (compose.Options.Warn); the hook and the status line
	// show them in the session instead.
	Warn func(*config.Error)
	// Front is set by the front program, which cannot resolve the
	// configuration itself (it does not link viper): the hot commands read
	// the resolution cached for their inputs (config.Options.Cache) and,
	// when there is none, return an *ErrFull before any output so that the
	// front hands the invocation to nexus-full, which resolves it and
	// keeps the resolution for the next hooks.
	Front bool
}

// ErrFull is a hot command's answer in the front when the configuration
// for its inputs is not resolved yet: the invocation is nexus-full's, run
// with Stdin (what the command read; nil: stdin is untouched). Nothing was
// written and nothing was changed.
type ErrFull struct{ Stdin []byte }

func (e *ErrFull) Error() string { return config.ErrUnresolved.Error() }

func unresolved(err error) bool { return errors.Is(err, config.ErrUnresolved) }

// FlagKeys binds global flags to configuration keys.
var FlagKeys = map[string]string{"core.dir": "core"}

// Flag is one flag of a hot command. The flags are declared here once:
// nexus-full registers them with pflag (under cobra), the front parses
// them itself, without a flag library (pflag links net, which a hook
// process would initialise; docs/performance.md).
type Flag struct {
	Name   string
	Usage  string
	Hidden bool
	// String is where a string flag's value goes (nil: a bool flag),
	// Default its default.
	String  *string
	Default string
	// Bool is where a bool flag's value goes (default false).
	Bool *bool
}

// GlobalFlags are the global flags (the root's persistent flags in the
// full command line): --project, --core and --json.
func GlobalFlags(project, core *string, json *bool) []Flag {
	return []Flag{
		{Name: "project", String: project, Usage: "project root (default: nearest folder above the working directory holding .nexus/ or .git)"},
		{Name: "core", String: core, Usage: "nexus-core distribution directory (overrides NEXUS_CORE_DIR and core.dir)"},
		{Name: "json", Bool: json, Usage: "print data as JSON where the command prints data"},
	}
}

// HookArgs are `nexus hook`'s own arguments.
type HookArgs struct {
	Host    string
	Variant string
	Plugin  bool // --plugin: --variant plugin
	Managed bool // --managed: marks an entry nexus install wrote; no effect
	// Serve is --serve: answer requests until input ends (a host whose
	// plugin keeps nexus running: host.Server).
	Serve bool
	Event string
}

// HookFlags are `nexus hook`'s flags.
func HookFlags(h *HookArgs) []Flag {
	return []Flag{
		{Name: "host", String: &h.Host, Default: "claude", Usage: "the host protocol: " + strings.Join(hosts.Names(), " or ")},
		{Name: "serve", Bool: &h.Serve, Usage: "answer requests until input ends (a host whose plugin keeps nexus running: opencode)"},
		// --managed marks entries written by `nexus install`; it changes nothing.
		{Name: "managed", Bool: &h.Managed, Hidden: true, Usage: "marks a hook entry written by nexus install (no effect)"},
		// --variant names the host's own variant of its setup, whose agents,
		// skills and tools carry other names (Claude Code's "plugin": the
		// nexus plugin package); --plugin is --variant plugin, as the plugin
		// package's hooks say.
		{Name: "variant", String: &h.Variant, Hidden: true, Usage: "the host's variant of its setup (claude: plugin)"},
		{Name: "plugin", Bool: &h.Plugin, Hidden: true, Usage: "the hook runs in the nexus plugin package (--variant plugin)"},
	}
}

// StatusLineFlags are `nexus statusline`'s flags.
func StatusLineFlags(managed *bool) []Flag {
	return []Flag{{Name: "managed", Bool: managed, Hidden: true, Usage: "marks the status line written by nexus install (no effect)"}}
}

// UsageError marks an error in how nexus was called (exit status 2).
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// IsConfigError reports whether err is a configuration file nexus could
// not read or parse (a problem in one key is only a warning).
func IsConfigError(err error) bool {
	var ce *config.Error
	return errors.As(err, &ce)
}

// IsUsageError reports whether err is a UsageError.
func IsUsageError(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}

// ComposeOptions are the composition root's options for the global flags:
// the configuration's layers with the bound flags, and the project when
// --project names one (which must be a folder).
func ComposeOptions(g Globals) (compose.Options, error) {
	o := compose.Options{Config: config.Options{Flags: g.Flags, FlagKeys: FlagKeys, Cache: config.DefaultCacheDir()}, Warn: g.Warn}
	if g.Project != "" {
		p, err := filepath.Abs(g.Project)
		if err != nil {
			return o, fmt.Errorf("resolve --project %s: %w", g.Project, err)
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return o, Usagef("--project %s is not a directory", g.Project)
		}
		o.Project = p
	}
	return o, nil
}

// writeJSON prints v as indented JSON without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
