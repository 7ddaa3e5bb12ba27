package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// PluginOptions are a project's plugin manager options, from its
// configuration: plugins.paths, plugins.settings, plugins.disabled, the
// decisions.* keys for the bundled store (declared unless
// decisions.enabled is off), the names no plugin may take, each plugin's
// data folder and the user's digest cache. nexusRoot is the .nexus folder
// when a command names one (--nexus-root), else "" (NexusDir decides).
// Nothing is read or started.
func PluginOptions(cfg *config.Config, project, nexusRoot string) pluginhost.Options {
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
	if l, err := ProjectLayout(cfg, project, nexusRoot); err == nil {
		o.DataRoot = filepath.Join(l.HarnessDir(), "plugins")
		o.DataAnchor = l.Anchor()
	}
	// The bundled store's names are reserved even while it is turned off,
	// and so are nexus's own (mcp.tool_prefix): no plugin takes them.
	o.Reserved = map[string]string{}
	for _, n := range decisionsapi.Tools() {
		o.Reserved[n] = "nexus's bundled decision store"
	}
	if p := cfg.String("mcp.tool_prefix"); p != "" {
		o.ReservedPrefixes = []string{p}
	}
	prog, err := hostProgram()
	if err == nil {
		o.HostProgram = prog
	} // else the Backend reports the missing program when a plugin must run
	if cfg.Bool("decisions.enabled") {
		o.Builtin = append(o.Builtin, DecisionsManifest(project, prog))
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

// PluginOptions are the plugin manager options of the engine's project,
// with each plugin's data folder beneath the .nexus folder the engine
// serves.
func (e *Engine) PluginOptions() pluginhost.Options {
	return PluginOptions(e.Config, e.Layout.Project, e.Layout.Nexus)
}
