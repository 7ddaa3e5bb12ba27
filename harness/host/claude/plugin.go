package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	installpkg "github.com/nexus-harness/nexus/harness/install"
)

// PluginMarketplace is the name of the local marketplace written beside the
// plugin: `claude plugin marketplace add DIR`, then
// `claude plugin install nexus@nexus-local`.
const PluginMarketplace = "nexus-local"

// PluginMCPPrefix is how Claude Code names the tools of the plugin's MCP
// server: mcp__plugin_<plugin>_<server>__<tool>.
const PluginMCPPrefix = "mcp__plugin_" + PluginName + "_" + MCPServerName + "__"

// PluginOptions describe the plugin package.
type PluginOptions struct {
	Command string // the nexus executable, absolute
	CoreDir string // passed as --core when set (see InstallOptions.CoreDir)
	Version string // nexus's version: the plugin's version
}

// semver is a semantic version (semver.org 2.0.0), a leading v allowed.
var semver = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)
})

// PluginVersion is the plugin's version for nexus's: a release's own
// (without its v), and for a development build, whose version is a git
// hash (make build's git describe --always), a semantic-version
// pre-release carrying it: 0.0.0-dev+<hash>.
func PluginVersion(v string) string {
	if semver().MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	var b strings.Builder
	for _, r := range v {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	meta := strings.Trim(strings.ReplaceAll(b.String(), "..", "."), ".")
	if meta == "" {
		return "0.0.0-dev"
	}
	return "0.0.0-dev+" + meta
}

// PluginFiles renders the plugin's own files: the manifest, the local
// marketplace listing it, the hooks and the MCP server, all running
// o.Command by absolute path (Claude Code copies an installed plugin into
// its cache, so nothing may point into the package folder).
func PluginFiles(o PluginOptions) ([]installpkg.OwnedFile, error) {
	if o.Command == "" {
		return nil, fmt.Errorf("no nexus executable for the plugin")
	}
	desc := "nexus harness for nexus-core: lifecycle hooks with the capability gate, the nx_* MCP tools, the nine role agents and the nx-* skills"
	version := PluginVersion(o.Version)
	manifest := map[string]any{
		"name":        PluginName,
		"version":     version,
		"description": desc,
		"author":      map[string]any{"name": "nexus"},
	}
	market := map[string]any{
		"name":        PluginMarketplace,
		"description": "the nexus plugin for this machine, written by `nexus install claude --plugin`",
		"owner":       map[string]any{"name": "nexus"},
		"plugins": []any{map[string]any{
			"name":        PluginName,
			"source":      "./",
			"description": desc,
			"version":     version,
		}},
	}
	hooks := newObject()
	for _, ie := range InstalledEvents {
		handler := newObject()
		handler.Set("type", "command")
		handler.Set("command", strings.Replace(HookCommand(o.Command, o.CoreDir, ie.Event), " "+ManagedFlag+" ", " "+ManagedFlag+" --plugin ", 1))
		handler.Set("timeout", json.Number(fmt.Sprint(HookTimeout)))
		group := newObject()
		if ie.Matcher != "" {
			group.Set("matcher", ie.Matcher)
		}
		group.Set("hooks", []any{handler})
		hooks.Set(ie.Event, []any{group})
	}
	hooksFile := newObject()
	hooksFile.Set("hooks", hooks)
	mcp := newObject()
	editMCP(mcp, o.Command, o.CoreDir, true, false)
	var files []installpkg.OwnedFile
	for _, f := range []struct {
		path string
		v    any
	}{
		{".claude-plugin/plugin.json", manifest},
		{".claude-plugin/marketplace.json", market},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f.v); err != nil {
			return nil, err
		}
		files = append(files, installpkg.OwnedFile{Path: f.path, Content: buf.Bytes()})
	}
	files = append(files,
		installpkg.OwnedFile{Path: "hooks/hooks.json", Content: installpkg.Encode(hooksFile)},
		installpkg.OwnedFile{Path: ".mcp.json", Content: installpkg.Encode(mcp)},
	)
	return files, nil
}

// WritePlugin writes (install) or removes (uninstall) a plugin package in
// dir: the files given (PluginFiles plus the rendered agents and skills),
// recorded in dir/install.RecordName like the agents of a scope; uninstall removes
// those of files the record lists, and nothing else. dir is the
// folder the user named: every file is written and removed beneath it, so
// a symlink inside it leading out (a shipped agents/ or .mcp.json) is
// refused.
func WritePlugin(dir string, files []installpkg.OwnedFile, o InstallOptions, install bool) ([]installpkg.Change, error) {
	if files == nil {
		return nil, nil // nothing derived: nothing nexus may act on
	}
	a, err := installpkg.OpenAnchor(dir, install && !o.DryRun)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return owned.Sync(a, "", files, o.options(), install)
}
