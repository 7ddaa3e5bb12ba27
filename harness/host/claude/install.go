package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// Installation scopes.
const (
	ScopeProject = installpkg.ScopeProject
	ScopeUser    = installpkg.ScopeUser
)

// owned is how nexus keeps its agents, skills and package files in a
// Claude Code folder: a plugin package's hidden names are allowed.
var owned = installpkg.Owned{Hidden: []string{".claude-plugin", ".mcp.json"}}

// ReadRecord reads the install record in a Claude Code folder (nil, nil
// when there is none).
func ReadRecord(dir string) (*installpkg.Record, error) { return owned.ReadRecord(dir) }

// CheckOwned compares the rendered files with a Claude Code folder,
// without changing anything (nexus doctor).
func CheckOwned(dir string, files []installpkg.OwnedFile) ([]installpkg.OwnedStatus, error) {
	return owned.Check(dir, files)
}

// ManagedFlag marks hook commands written by the installer; `nexus hook`
// accepts and ignores it. Uninstall removes only commands carrying it.
const ManagedFlag = "--managed"

// MCPServerName is the name nexus registers its MCP server under.
const MCPServerName = "nexus"

// HookTimeout is the timeout (seconds) written on each hook entry.
const HookTimeout = 30

// InstalledEvents are the hook events `nexus install claude` registers,
// with their matcher ("" = no matcher: every occurrence). Stop, PreCompact
// and PostCompact are left out: nexus has nothing to do on them.
var InstalledEvents = []struct{ Event, Matcher string }{
	{SessionStart, ""},
	{UserPromptSubmit, ""},
	{PreToolUse, "*"},
	{PostToolUse, "*"},
	{PostToolUseFailure, "*"},
	{SubagentStart, ""},
	{SubagentStop, ""},
	{SessionEnd, ""},
}

// InstallOptions say where and what to install.
type InstallOptions struct {
	Scope   string // project or user
	Project string // project root (project scope)
	Home    string // the user's home folder (user scope)
	// Command is the nexus executable the entries run.
	Command string
	// Files are the agents and skills nexus derives from the distribution
	// for the scope's Claude Code folder (.claude or ~/.claude), recorded in
	// install.RecordName. Install writes them; Uninstall removes those the
	// record says nexus wrote (and nobody edited since). They are the only
	// files either acts on: a record entry that is not one of them is
	// reported and left alone. nil leaves the owned files alone.
	Files []installpkg.OwnedFile
	// DryRun computes and reports the changes without writing anything.
	DryRun bool
	// Force replaces (or removes) owned files edited since nexus wrote
	// them, and files of the same name nexus did not write, keeping a
	// backup.
	Force bool
	// Now is the clock of backup names (nil = time.Now).
	Now func() time.Time
	// Version and CoreVersion are stored in the record.
	Version, CoreVersion string
	// StatusLine registers `nexus statusline` as Claude Code's status line
	// (an existing one nexus did not write is left alone). Without it an
	// installed nexus status line stays; Uninstall removes it.
	StatusLine bool
	// CoreDir, when set, is passed to every registered command as --core:
	// the user chose a distribution Claude Code's environment would not
	// find (a flag or NEXUS_CORE_DIR).
	CoreDir string
	// Nauro registers the bundled decision store as its own MCP server
	// "nauro" (`nexus mcp --only decisions`) beside "nexus" (then run as
	// `nexus mcp --without decisions`). Without it an entry "nauro" nexus
	// wrote is removed and "nexus" serves every tool.
	Nauro bool
}

// options are the shared install options of o.
func (o InstallOptions) options() installpkg.Options {
	return installpkg.Options{DryRun: o.DryRun, Force: o.Force, Now: o.Now, Version: o.Version, CoreVersion: o.CoreVersion}
}

// ClaudeDir returns the scope's Claude Code folder, where agents/ and
// skills/ live.
func ClaudeDir(o InstallOptions) (string, error) {
	settings, _, err := Paths(o)
	if err != nil {
		return "", err
	}
	return filepath.Dir(settings), nil
}

// Paths returns the hooks settings file and the MCP servers file of a scope.
func Paths(o InstallOptions) (settings, mcp string, err error) {
	switch o.Scope {
	case ScopeProject, "":
		if o.Project == "" {
			return "", "", errors.New("project scope needs the project folder")
		}
		return filepath.Join(o.Project, ".claude", "settings.json"), filepath.Join(o.Project, ".mcp.json"), nil
	case ScopeUser:
		if o.Home == "" {
			return "", "", errors.New("user scope needs the home folder")
		}
		return filepath.Join(o.Home, ".claude", "settings.json"), filepath.Join(o.Home, ".claude.json"), nil
	}
	return "", "", fmt.Errorf("unknown scope %q: use project or user", o.Scope)
}

// HookCommand is the command line written for one event; coreDir (when
// not "") is passed as --core.
func HookCommand(nexus, coreDir, event string) string {
	core := ""
	if coreDir != "" {
		core = "--core " + shellQuote(coreDir) + " "
	}
	return shellQuote(nexus) + " hook --host claude " + ManagedFlag + " " + core + event
}

// StatusLineCommand is the status-line command install writes.
func StatusLineCommand(nexus string) string {
	return shellQuote(nexus) + " statusline " + ManagedFlag
}

// isOurStatusLine reports whether a statusLine entry is the one install
// writes.
func isOurStatusLine(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	cmd, _ := getAs[string](o, "command")
	return strings.Contains(cmd, " statusline "+ManagedFlag)
}

// editStatusLine adds (with want) or removes nexus's status line.
func editStatusLine(root *object, nexus string, install, want bool) []string {
	cur, exists := root.Get("statusLine")
	if !install {
		if exists && isOurStatusLine(cur) {
			root.Delete("statusLine")
		}
		return nil
	}
	if exists && !isOurStatusLine(cur) {
		if want {
			return []string{"a status line nexus did not write is configured; nexus left it alone (remove statusLine from the settings to use nexus's)"}
		}
		return nil
	}
	if !exists && !want {
		return nil
	}
	entry, _ := cur.(*object)
	if entry == nil {
		entry = newObject()
	}
	entry.Set("type", "command")
	entry.Set("command", StatusLineCommand(nexus))
	entry.Set("padding", json.Number("0"))
	root.Set("statusLine", entry)
	return nil
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string { return installpkg.ShellQuote(s) }

func shellQuote(s string) string { return installpkg.ShellQuote(s) }

// isOurs reports whether a hook handler was written by the installer.
func isOurs(h any) bool {
	o, ok := h.(*object)
	if !ok {
		return false
	}
	cmd, _ := getAs[string](o, "command")
	typ, _ := getAs[string](o, "type")
	return typ == "command" && strings.Contains(cmd, " hook --host claude "+ManagedFlag+" ")
}

// ourHandlers lists the handlers the installer wrote in one event's
// matcher groups, in file order.
func ourHandlers(groups []any) []*object {
	var out []*object
	for _, g := range groups {
		gobj, ok := g.(*object)
		if !ok {
			continue
		}
		hs, _ := getAs[[]any](gobj, "hooks")
		for _, h := range hs {
			if isOurs(h) {
				out = append(out, h.(*object))
			}
		}
	}
	return out
}

// Install merges nexus's hook entries and MCP server into Claude Code's
// settings files of the scope.
func Install(o InstallOptions) ([]installpkg.Change, error) {
	return apply(o, true)
}

// Uninstall removes what Install wrote, and nothing else.
func Uninstall(o InstallOptions) ([]installpkg.Change, error) {
	return apply(o, false)
}

func apply(o InstallOptions, install bool) ([]installpkg.Change, error) {
	// Uninstalling, Command (when given) only helps recognise nexus's MCP
	// server entry.
	if install && o.Command == "" {
		return nil, errors.New("no nexus executable to register")
	}
	settingsPath, mcpPath, err := Paths(o)
	if err != nil {
		return nil, err
	}
	claudeDir := filepath.Dir(settingsPath)
	if o.Scope == ScopeUser {
		settingsPath, mcpPath = installpkg.Resolve(settingsPath), installpkg.Resolve(mcpPath)
		claudeDir = installpkg.Resolve(claudeDir)
	}
	// Everything is written beneath the scope's folder (see
	// install.Anchor).
	a, err := installpkg.OpenAnchor(anchorDir(o), false)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	prefix, err := a.NameOf(claudeDir)
	if err != nil {
		return nil, err
	}
	if o.Scope == ScopeUser {
		// ~/.claude, ~/.claude/settings.json and ~/.claude.json may lead
		// into a dotfiles folder (resolved above); inside the Claude Code
		// folder nothing nexus touches may be a symlink.
		a.PlainFrom = prefix
	}
	// Every name this run may write or remove is checked before the first
	// write: a symlink on the way refuses the whole run.
	var names []string
	for _, p := range []string{settingsPath, mcpPath} {
		name, err := a.NameOf(p)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	if o.Files != nil {
		names = append(names, installpkg.OwnedNames(prefix, o.Files)...)
	}
	for _, n := range names {
		if err := a.CheckPlain(n); err != nil {
			return nil, err
		}
	}
	var changes []installpkg.Change
	for _, f := range []struct {
		path        string
		edit, strip func(*object) []string
	}{
		{settingsPath, func(root *object) []string {
			editHooks(root, o.Command, o.CoreDir, install)
			return editStatusLine(root, o.Command, install, o.StatusLine)
		}, func(root *object) []string {
			editHooks(root, o.Command, o.CoreDir, false)
			return editStatusLine(root, o.Command, false, false)
		}},
		{mcpPath, func(root *object) []string { return editMCP(root, o.Command, o.CoreDir, install, o.Nauro) },
			func(root *object) []string { return editMCP(root, o.Command, o.CoreDir, false, o.Nauro) }},
	} {
		name, err := a.NameOf(f.path)
		if err != nil {
			return changes, err
		}
		strip := f.strip
		chs, err := installpkg.EditJSONFile(a, installpkg.JSONFile{Name: name, Edit: f.edit, Strip: func(root *object) { strip(root) }, Restoring: !install}, o.options())
		changes = append(changes, chs...)
		if err != nil {
			return changes, err
		}
	}
	if o.Files == nil {
		// Nothing rendered (a caller that only repairs the settings, an
		// uninstall that could not load the distribution): the owned files
		// stay as they are, since nexus acts only on files it derives.
		return changes, nil
	}
	files, err := owned.Sync(a, prefix, o.Files, o.options(), install)
	return append(changes, files...), err
}

// anchorDir is the folder a scope's writes stay beneath. For the project
// scope that is the project: a cloned repository may ship .claude or
// .mcp.json as symlinks, so nothing may lead out of it. The user scope's
// files (~/.claude/…, ~/.claude.json) are the user's own, and keeping them
// in a dotfiles folder through an absolute symlink is common, so they are
// followed wherever they lead (the filesystem root as the anchor).
func anchorDir(o InstallOptions) string {
	if o.Scope == ScopeUser {
		return string(filepath.Separator)
	}
	return o.Project
}

// editHooks adds (or, uninstalling, removes) nexus's hook handlers.
func editHooks(root *object, nexus, coreDir string, install bool) {
	hv, _ := root.Get("hooks")
	hooks, ok := hv.(*object)
	if !ok {
		if !install {
			return
		}
		hooks = newObject()
		root.Set("hooks", hooks)
	}
	if !install {
		for _, ev := range hooks.Keys() {
			groups, ok := getAs[[]any](hooks, ev)
			if !ok {
				continue
			}
			var kept []any
			touched := false
			for _, g := range groups {
				gobj, ok := g.(*object)
				if !ok {
					kept = append(kept, g)
					continue
				}
				hs, ok := getAs[[]any](gobj, "hooks")
				if !ok {
					kept = append(kept, g)
					continue
				}
				var rest []any
				for _, h := range hs {
					if isOurs(h) {
						touched = true
						continue
					}
					rest = append(rest, h)
				}
				if len(rest) == 0 && len(hs) > 0 {
					continue // the group held only nexus's handler
				}
				if len(rest) != len(hs) {
					gobj.Set("hooks", rest)
				}
				kept = append(kept, g)
			}
			if !touched {
				continue
			}
			if len(kept) == 0 {
				hooks.Delete(ev)
			} else {
				hooks.Set(ev, kept)
			}
		}
		if hooks.Len() == 0 {
			root.Delete("hooks")
		}
		return
	}
	for _, ie := range InstalledEvents {
		want := HookCommand(nexus, coreDir, ie.Event)
		groups, _ := getAs[[]any](hooks, ie.Event)
		if ours := ourHandlers(groups); len(ours) > 0 {
			// The executable may have moved: keep the entry current.
			if c, _ := getAs[string](ours[0], "command"); c != want {
				ours[0].Set("command", want)
			}
			continue
		}
		handler := newObject()
		handler.Set("type", "command")
		handler.Set("command", want)
		handler.Set("timeout", json.Number(fmt.Sprint(HookTimeout)))
		group := newObject()
		if ie.Matcher != "" {
			group.Set("matcher", ie.Matcher)
		}
		group.Set("hooks", []any{handler})
		hooks.Set(ie.Event, append(groups, group))
	}
}

// ourServer reports whether an mcpServers entry is the one nexus writes: a
// server running this nexus executable (or any executable named nexus)
// with the argument mcp.
func ourServer(v any, nexus string) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	cmd, _ := getAs[string](o, "command")
	args, _ := getAs[[]any](o, "args")
	base := filepath.Base(cmd)
	named := cmd == nexus || base == "nexus" || strings.HasPrefix(base, "nexus.")
	return named && len(args) >= 1 && args[0] == "mcp"
}

// editMCP adds (or removes) the nexus MCP server, and the "nauro" one
// when the decision store is served on its own.
func editMCP(root *object, nexus, coreDir string, install, nauro bool) []string {
	var notes []string
	if sv, ok := root.Get("mcpServers"); ok && install && nauro {
		if servers, ok := sv.(*object); ok {
			if cur, exists := servers.Get(decisionsapi.ServerName); exists && !ourServer(cur, nexus) {
				// Nauro's own server (or another tool) holds the name: the
				// store's tools stay on the nexus entry.
				notes = append(notes, fmt.Sprintf("an MCP server named %q already exists and does not run nexus; the decision store's tools are served by %q instead", decisionsapi.ServerName, MCPServerName))
				nauro = false
			}
		}
	}
	nexusArgs := []any{"mcp"}
	if nauro {
		nexusArgs = []any{"mcp", "--without", decisionsapi.Name}
	}
	nauroArgs := []any{"mcp", "--only", decisionsapi.Name}
	if coreDir != "" {
		nexusArgs = append(nexusArgs, "--core", coreDir)
		nauroArgs = append(nauroArgs, "--core", coreDir)
	}
	notes = append(notes, editServer(root, MCPServerName, nexus, nexusArgs, install)...)
	return append(notes, editServer(root, decisionsapi.ServerName, nexus, nauroArgs, install && nauro)...)
}

// editServer writes (want) or removes one MCP server entry running nexus;
// an entry of that name nexus did not write is left alone.
func editServer(root *object, name, nexus string, args []any, want bool) []string {
	sv, _ := root.Get("mcpServers")
	servers, ok := sv.(*object)
	if !want {
		if !ok {
			return nil
		}
		cur, exists := servers.Get(name)
		if !exists {
			return nil
		}
		if !ourServer(cur, nexus) {
			if name == MCPServerName {
				return []string{fmt.Sprintf("the MCP server %q was not written by nexus install; left alone", name)}
			}
			return nil
		}
		servers.Delete(name)
		if servers.Len() == 0 {
			root.Delete("mcpServers")
		}
		return nil
	}
	if !ok {
		servers = newObject()
		root.Set("mcpServers", servers)
	}
	if cur, exists := servers.Get(name); exists && !ourServer(cur, nexus) {
		return []string{fmt.Sprintf("an MCP server named %q already exists and does not run nexus; nexus left it alone, so its tools are not registered", name)}
	}
	cur, _ := servers.Get(name)
	entry, _ := cur.(*object)
	if entry == nil {
		entry = newObject()
	}
	entry.Set("type", "stdio")
	entry.Set("command", nexus)
	entry.Set("args", args)
	servers.Set(name, entry)
	return nil
}

// object is a JSON object that keeps its member order (the settings
// files are the user's too).
type object = installpkg.Object

func newObject() *object { return installpkg.NewObject() }

func getAs[T any](o *object, k string) (T, bool) { return installpkg.GetAs[T](o, k) }

// RegisteredCoreDir returns the --core argument of a registered hook
// command line ("" when it has none).
func RegisteredCoreDir(command string) string {
	words, ok := SplitCommand(command)
	if !ok {
		return ""
	}
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "--core" {
			return words[i+1]
		}
	}
	return ""
}
