package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// A repository is not trusted to open doors: a cloned project's
// .nexus/nexus.yaml must not choose who can reach nexus, what secret guards
// it, or where nexus writes outside the project. docs/security.md explains
// the rule; these two tables are the whole of it.

// UserOnly lists the keys that only the user's file, the environment or a
// flag may set, with why. A project file that sets one is an error.
var UserOnly = map[string]string{
	"mcp.http_addr":        "it decides who can reach the MCP server",
	"mcp.token_file":       "it decides which secret guards the MCP server (and nexus makes that file private)",
	"decisions.nauro_home": "it decides where decision stores outside the project are written",
}

// ProjectLocal lists the keys a project file may set only to a relative
// path that stays inside the project (no absolute path, no ..).
var ProjectLocal = map[string]string{
	"runtime.root":    "it decides where nexus writes its state",
	"decisions.store": "it decides where decisions are written",
}

// UserOnlyKeys returns the UserOnly keys, sorted.
func UserOnlyKeys() []string {
	out := make([]string, 0, len(UserOnly))
	for k := range UserOnly {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkTrust refuses a project-layer value the project may not set.
func checkTrust(layer, key string, val any) string {
	if layer != LayerProject {
		return ""
	}
	if why, ok := UserOnly[key]; ok {
		return fmt.Sprintf("a project's %s cannot set this key: %s. Set it in your user file (%s), in %s, or with a flag",
			ProjectFile, why, "~/.config/nexus/config.yaml", EnvName(key))
	}
	if key == "plugins.settings" {
		// The decision store's settings can also come through its plugin
		// settings (plugins.settings.decisions.nauro_home / store).
		m, _ := val.(map[string]any)
		d, _ := m[decisionsapi.Name].(map[string]any)
		for sub, k := range map[string]string{decisionsapi.SettingHome: "decisions.nauro_home", decisionsapi.SettingStore: "decisions.store"} {
			if v, ok := d[sub]; ok {
				if msg := checkTrust(layer, k, v); msg != "" {
					return "plugins.settings." + decisionsapi.Name + "." + sub + ": " + msg
				}
			}
		}
		return ""
	}
	if why, ok := ProjectLocal[key]; ok {
		s, _ := val.(string)
		if s != "" && (filepath.IsAbs(s) || !filepath.IsLocal(filepath.FromSlash(s)) || strings.HasPrefix(s, "~")) {
			return fmt.Sprintf("a project's %s may set this key only to a path inside the project (%q leaves it): %s. "+
				"Set it in your user file, in %s, or with a flag", ProjectFile, s, why, EnvName(key))
		}
	}
	return ""
}
