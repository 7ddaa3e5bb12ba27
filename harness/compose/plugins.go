package compose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// PluginOptions are the project's plugin manager options (nothing is read
// or started): plugins.paths, plugins.settings, plugins.disabled, the
// decisions.* keys for the bundled store (declared unless
// decisions.enabled is off), the names no plugin may take, each plugin's
// data folder beneath the .nexus folder nexusRoot names (as NexusDir
// resolves it) and the user's digest cache.
func (r *Root) PluginOptions(nexusRoot string) (pluginhost.Options, error) {
	cfg, err := r.Config()
	if err != nil {
		return pluginhost.Options{}, err
	}
	proj, _ := r.Project()
	dir, derr := NexusDir(cfg, proj, nexusRoot)
	if derr != nil {
		dir = ""
	}
	return r.pluginOptions(cfg, proj, dir, harnessID(cfg, r.o.Host)), nil
}

// PluginOptionsOf are the plugin options of a configuration that loaded in
// part (the doctor's: the layers that load); without the whole
// configuration, the built-in plugins, whose settings come from it, are
// left out.
func PluginOptionsOf(cfg *config.Config, whole bool, project, nexusRoot string) pluginhost.Options {
	dir, err := NexusDir(cfg, project, nexusRoot)
	if err != nil {
		dir = ""
	}
	o := pluginOptions(cfg, project, dir, harnessID(cfg, nil))
	if !whole {
		o.Builtin = nil
	}
	return o
}

func (r *Root) pluginOptions(cfg *config.Config, project, nexusDir, id string) pluginhost.Options {
	return pluginOptions(cfg, project, nexusDir, id)
}

func pluginOptions(cfg *config.Config, project, nexusDir, id string) pluginhost.Options {
	o := pluginhost.Options{
		ProjectDir:  project,
		Paths:       cfg.StringList("plugins.paths"),
		Settings:    pluginSettings(cfg),
		Disabled:    cfg.StringList("plugins.disabled"),
		DigestCache: pluginhost.DefaultDigestCache(),
	}
	// Each plugin's data folder: .nexus/state/<harness-id>/plugins/<name>/,
	// in the harness's own state namespace, which .nexus/.gitignore keeps
	// out of version control. Without a usable .nexus folder or harness id
	// plugins get none (the engine reports those itself).
	if nexusDir != "" {
		if l, err := state.NewLayoutAt(project, nexusDir, id); err == nil {
			o.DataRoot = filepath.Join(l.HarnessDir(), "plugins")
			o.DataAnchor = l.Anchor()
		}
	}
	// The bundled store's names are reserved even while it is turned off,
	// and so are nexus's own (mcp.tool_prefix): no plugin takes them.
	o.Reserved = map[string]string{}
	for _, n := range decisionsapi.Tools() {
		o.Reserved[n] = "nexus's bundled decision store"
	}
	if p := toolPrefix(cfg); p != "" {
		o.ReservedPrefixes = []string{p}
	}
	prog, err := hostProgram()
	if err == nil {
		o.HostProgram = prog
	} // else the Backend reports the missing program when a plugin must run
	if cfg.Bool("decisions.enabled") {
		o.Builtin = append(o.Builtin, harness.DecisionsManifest(project, prog))
	}
	return o
}

// hostProgram is the plugin host executable; when it is not installed the
// path it should have is returned with the error, so that the declarations
// (and their tools' names) stay the same.
func hostProgram() (string, error) {
	p, err := pluginhost.DefaultHostProgram()
	if err != nil {
		exe, _ := os.Executable()
		return filepath.Join(filepath.Dir(exe), pluginhost.HostProgramName), err
	}
	return p, nil
}

// pluginSettings turns plugins.settings (plugin → mapping) into strings,
// with the decisions.* keys as the bundled store's settings: a key set in
// any layer wins over the plugins.settings entry, a default only fills a
// gap.
func pluginSettings(cfg *config.Config) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, v := range cfg.Map("plugins.settings") {
		m, ok := v.(map[string]any)
		if !ok {
			continue // validated by config; a scalar here is a typo
		}
		s := map[string]string{}
		for k, val := range m {
			s[k] = fmt.Sprint(val)
		}
		out[name] = s
	}
	d := out[decisionsapi.Name]
	if d == nil {
		d = map[string]string{}
	}
	for key, setting := range map[string]string{
		"decisions.frontmatter": decisionsapi.SettingFrontmatter,
		"decisions.nauro_home":  decisionsapi.SettingHome,
		"decisions.store":       decisionsapi.SettingStore,
	} {
		if v := cfg.String(key); v != "" && (cfg.IsSet(key) || d[setting] == "") {
			d[setting] = v
		}
	}
	out[decisionsapi.Name] = d
	return out
}

// HookServerArgs start the hook server of a project (in the plugin host
// program).
func HookServerArgs(project string) []string {
	return []string{"hook-server", "--project", project}
}

// spawnHookServer starts a project's hook server, detached.
func spawnHookServer(hostProgram, project, dir string) error {
	return pluginhost.SpawnHookServer(hostProgram, HookServerArgs(project), dir)
}

// servePlugins starts the project's plugins and puts their tools into the
// engine's registry (harness.Engine.ServePlugins); the plugins stop when
// the harness is closed.
func (r *Root) servePlugins(ctx context.Context, h *Harness, cfg *config.Config, proj, nexusDir, id string, o HarnessOptions) error {
	po := r.pluginOptions(cfg, proj, nexusDir, id)
	if o.Builtin != nil {
		po.Builtin = slices.DeleteFunc(po.Builtin, func(m *pluginhost.Manifest) bool { return !o.Builtin(m) })
	}
	po.Logger = o.PluginLog
	if po.Logger == nil {
		po.Logger = pluginhost.NopLogger{}
	}
	po.HostStderr = o.HostStderr
	m, err := pluginhost.Open(po)
	if err != nil {
		return err
	}
	h.Plugins = m
	h.NotServed = h.Engine.ServePlugins(ctx, m, o.Serve)
	return nil
}
