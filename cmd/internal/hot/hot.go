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

	"github.com/spf13/pflag"

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
	Flags *pflag.FlagSet
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

// GlobalFlags defines the global flags in fs (the root's persistent flags
// in the full command line, the front's own flag set): --project, --core
// and --json.
func GlobalFlags(fs *pflag.FlagSet, project, core *string, json *bool) {
	fs.StringVar(project, "project", "", "project root (default: nearest folder above the working directory holding .nexus/ or .git)")
	fs.StringVar(core, "core", "", "nexus-core distribution directory (overrides NEXUS_CORE_DIR and core.dir)")
	fs.BoolVar(json, "json", false, "print data as JSON where the command prints data")
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

// HookFlags defines `nexus hook`'s flags in fs.
func HookFlags(fs *pflag.FlagSet, h *HookArgs) {
	fs.StringVar(&h.Host, "host", "claude", "the host protocol: "+strings.Join(hosts.Names(), " or "))
	fs.BoolVar(&h.Serve, "serve", false, "answer requests until input ends (a host whose plugin keeps nexus running: opencode)")
	// --managed marks entries written by `nexus install`; it changes nothing.
	fs.BoolVar(&h.Managed, "managed", false, "marks a hook entry written by nexus install (no effect)")
	_ = fs.MarkHidden("managed")
	// --variant names the host's own variant of its setup, whose agents,
	// skills and tools carry other names (Claude Code's "plugin": the nexus
	// plugin package); --plugin is --variant plugin, as the plugin
	// package's hooks say.
	fs.StringVar(&h.Variant, "variant", "", "the host's variant of its setup (claude: plugin)")
	_ = fs.MarkHidden("variant")
	fs.BoolVar(&h.Plugin, "plugin", false, "the hook runs in the nexus plugin package (--variant plugin)")
	_ = fs.MarkHidden("plugin")
}

// StatusLineFlags defines `nexus statusline`'s flags in fs.
func StatusLineFlags(fs *pflag.FlagSet, managed *bool) {
	fs.BoolVar(managed, "managed", false, "marks the status line written by nexus install (no effect)")
	_ = fs.MarkHidden("managed")
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
