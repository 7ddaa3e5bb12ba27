package setup

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/codex"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// Host is Codex with its setup: `nexus install codex`, `nexus uninstall
// codex` and the doctor's checks of what they wrote. It is registered in
// harness/host/setups; a hook links only the host itself
// (harness/host/codex), not go-toml, the install machinery's renderers or
// the doctor's MCP probe.
type Host struct{ codex.Host }

// What `nexus install codex` writes, per scope:
//
//	project                         user
//	.codex/config.toml              $CODEX_HOME/config.toml   [mcp_servers.nexus] (and .nauro)
//	.codex/hooks.json               $CODEX_HOME/hooks.json    nexus's handlers, after the user's
//	.codex/agents/<id>.toml         $CODEX_HOME/agents/       the nine roles (record: .codex/nexus-install.json)
//	.agents/skills/<id>/SKILL.md    ~/.agents/skills/         the skills (record: .agents/nexus-install.json)
//
// ($CODEX_HOME defaults to ~/.codex.) With --trust-hooks it also records,
// in the user's config.toml (the only place Codex reads hook trust from),
// [hooks.state."<key>"] trusted_hash for each handler it wrote. Everything
// else in these files stays as it is, byte for byte.

// owned is how nexus keeps its agent and skill files with their records.
var owned = installpkg.Owned{}

// HomeEnv moves Codex's user folder (default ~/.codex).
const HomeEnv = "CODEX_HOME"

// AgentsHomeDir is the user's skills folder's parent beside the home folder
// (~/.agents), as the project's is beside .codex.
const AgentsHomeDir = ".agents"

// Folders are the files of one scope.
type Folders struct {
	Scope string
	// Project is the project root (project scope; symlinks resolved).
	Project string
	// Codex is the scope's Codex folder (project/.codex, $CODEX_HOME or
	// ~/.codex); Agents the folder of skills/ (project/.agents, ~/.agents).
	Codex, Agents string
	// UserConfig is the user's config.toml, where hook trust lives.
	UserConfig string
}

// Config, Hooks are the scope's config.toml and hooks.json.
func (f Folders) Config() string { return filepath.Join(f.Codex, ConfigFile) }

// Hooks is the scope's hooks.json.
func (f Folders) Hooks() string { return filepath.Join(f.Codex, codex.HooksFile) }

// UserCodexDir is the user's Codex folder: $CODEX_HOME, else ~/.codex.
func UserCodexDir(home string, getenv func(string) string) string {
	if getenv != nil {
		if d := getenv(HomeEnv); d != "" && filepath.IsAbs(d) {
			return filepath.Clean(d)
		}
	}
	return filepath.Join(home, ".codex")
}

// ScopeFolders returns the files of a scope. The user's folders are
// resolved through symlinks (kept in a dotfiles folder, they are written
// where they lead); a project's are not, since nothing may lead out of it.
func ScopeFolders(scope, project, home string, getenv func(string) string) (Folders, error) {
	f := Folders{Scope: scope}
	if home != "" {
		f.UserConfig = resolve(filepath.Join(UserCodexDir(home, getenv), ConfigFile))
	}
	switch scope {
	case installpkg.ScopeProject, "":
		if project == "" {
			return f, errors.New("project scope needs the project folder")
		}
		f.Scope = installpkg.ScopeProject
		f.Project = resolve(project)
		f.Codex, f.Agents = filepath.Join(f.Project, ".codex"), filepath.Join(f.Project, AgentsHomeDir)
	case installpkg.ScopeUser:
		if home == "" {
			return f, errors.New("user scope needs the home folder")
		}
		f.Codex, f.Agents = resolve(UserCodexDir(home, getenv)), resolve(filepath.Join(home, AgentsHomeDir))
	default:
		return f, fmt.Errorf("unknown scope %q: use project or user", scope)
	}
	return f, nil
}

// resolve names a path with symlinks resolved, as Codex, which
// canonicalises paths, names files in its trust keys.
func resolve(p string) string { return installpkg.Resolve(p) }

// Install implements install.Installer.
func (h Host) Install(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, true)
}

// Uninstall implements install.Installer: what Install wrote, and nothing
// else.
func (h Host) Uninstall(req installpkg.Request) ([]installpkg.Change, error) {
	return h.apply(req, false)
}

// ServerArgs are the arguments of nexus's MCP server entries: "nexus"
// (serving everything, or all but the decision store when it is served on
// its own as "nauro") and "nauro".
func ServerArgs(coreDir string, nauro bool) (nexusArgs, nauroArgs []string) {
	nexusArgs = []string{"mcp", "--host", codex.Name}
	if nauro {
		nexusArgs = append(nexusArgs, "--without", decisionsapi.Name)
	}
	nauroArgs = []string{"mcp", "--host", codex.Name, "--only", decisionsapi.Name}
	if coreDir != "" {
		nexusArgs = append(nexusArgs, "--core", coreDir)
		nauroArgs = append(nauroArgs, "--core", coreDir)
	}
	return nexusArgs, nauroArgs
}

// TrustHooksHelp implements install.HookTruster.
func (Host) TrustHooksHelp() string {
	return "record in the user's config.toml that you trust the hooks nexus writes (what reviewing them with /hooks in Codex records), for exactly those hooks"
}

func (h Host) apply(req installpkg.Request, install bool) ([]installpkg.Change, error) {
	if install && req.Command == "" {
		return nil, errors.New("no nexus executable to register")
	}
	if req.StatusLine {
		return nil, errors.New("--statusline: Codex has no status line nexus can register")
	}
	f, err := ScopeFolders(req.Scope, req.Project, req.Home, req.Getenv)
	if err != nil {
		return nil, err
	}
	// The agents and skills are rendered for uninstall too: their paths are
	// the only files either acts on (a record only says which of them nexus
	// wrote).
	var agents, skills []installpkg.OwnedFile
	var notes []installpkg.Change
	if req.Catalog != nil {
		a, s, coreVersion, err := h.CatalogFiles(req)
		switch {
		case err != nil && install:
			return nil, err
		case err != nil:
			notes = append(notes, installpkg.Change{Path: f.Codex, Notes: []string{"the agent and skill files are left in place: " + err.Error()}})
		default:
			agents, skills, req.CoreVersion = a, s, coreVersion
		}
	}
	// Without a catalog (a repair of the registration alone) the agent and
	// skill files stay as they are: nexus acts only on files it derives.
	w, err := openWriters(f)
	if err != nil {
		return nil, err
	}
	defer w.close()
	// Every name this run may write or remove is checked before the first
	// write: a symlink on the way refuses the whole run.
	names := []string{w.configName, w.hooksName}
	if agents != nil {
		names = append(names, installpkg.OwnedNames(w.codexPrefix, agents)...)
	}
	for _, n := range names {
		if err := w.codex.CheckPlain(n); err != nil {
			return nil, err
		}
	}
	if skills != nil {
		for _, n := range installpkg.OwnedNames(w.agentsPrefix, skills) {
			if err := w.agents.CheckPlain(n); err != nil {
				return nil, err
			}
		}
	}
	o := req.Options
	var changes []installpkg.Change

	rs := restores(w, f)
	nexusArgs, nauroArgs := ServerArgs(req.CoreDir, req.Decisions)
	cfg, err := installpkg.EditFile(w.codex, w.configName, maxConfigFile, o, rs.config, func(before []byte, _ bool) ([]byte, bool, []string, error) {
		e := ConfigEdit{RemoveServers: []string{codex.MCPServerName, decisionsapi.ServerName}}
		if install {
			// Codex passes a server only HOME, LANG, PATH (and a few more)
			// and what its entry lists: nexus's settings in the environment
			// must reach it as they reach the hooks.
			e.Servers = []MCPServer{{Name: codex.MCPServerName, Command: req.Command, Args: nexusArgs, EnvVars: req.ServerEnv}}
			if req.Decisions {
				e.Servers = append(e.Servers, MCPServer{Name: decisionsapi.ServerName, Command: req.Command, Args: nauroArgs, EnvVars: req.ServerEnv})
			}
		}
		return configResult(before, e, f.Config())
	})
	changes = append(changes, cfg)
	if err != nil {
		return changes, err
	}

	// hooks.json, and the trust of the handlers in it.
	oldHooks, _, err := w.codex.Read(w.hooksName, codex.MaxHooksFile)
	if err != nil {
		return changes, err
	}
	var newHooks []byte
	hk, err := installpkg.EditFile(w.codex, w.hooksName, codex.MaxHooksFile, o, rs.hooks, func(before []byte, _ bool) ([]byte, bool, []string, error) {
		r, err := codex.EditHooks(before, req.Command, req.CoreDir, install)
		if err != nil {
			return nil, false, nil, fmt.Errorf("%s: %w", f.Hooks(), err)
		}
		newHooks = r.Data
		return r.Data, r.Remove, nil, nil
	})
	if err != nil {
		return append(changes, hk), err
	}
	trust, err := h.editTrust(w, f, oldHooks, newHooks, req, install, rs.user)
	hk.Notes = append(hk.Notes, trustNotes(f, w.hooksKey, newHooks, install, req.DryRun)...)
	changes = append(changes, hk)
	if trust != nil {
		changes = append(changes, *trust)
	}
	if err != nil {
		return changes, err
	}

	if agents != nil {
		got, err := owned.Sync(w.codex, w.codexPrefix, agents, o, install)
		changes = append(changes, got...)
		if err != nil {
			return changes, err
		}
	}
	if skills != nil {
		got, err := owned.Sync(w.agents, w.agentsPrefix, skills, o, install)
		changes = append(changes, got...)
		if err != nil {
			return changes, err
		}
	}
	if install {
		if both := bothScopes(f, req); both != nil {
			notes = append(notes, *both)
		}
	} else {
		// Once every edit of a file is made, its backups that hold nothing
		// it does not hold now go; the others are named.
		for _, p := range rs.prune(trust != nil && trust.Changed) {
			got, err := installpkg.PruneBackups(p.a, p.name, o, p.restore)
			changes = append(changes, got...)
			if err != nil {
				return changes, err
			}
		}
	}
	return append(changes, notes...), nil
}

// sharedRestores are what uninstall makes of each file Codex shares with
// its users (installpkg.Restore): the scope's config.toml without nexus's
// servers, hooks.json without nexus's handlers, the user's config.toml
// without the trust entries of nexus's handlers in the scope's hooks.json
// (and, when it is the scope's config.toml, without the servers too).
type sharedRestores struct {
	w                   *writers
	config, hooks, user installpkg.Restore
	userIsConfig        bool
}

func restores(w *writers, f Folders) sharedRestores {
	servers := []string{codex.MCPServerName, decisionsapi.ServerName}
	rs := sharedRestores{w: w, userIsConfig: f.UserConfig != "" && resolve(f.Config()) == f.UserConfig}
	if rs.userIsConfig {
		rs.config = configRestore(w, servers)
		rs.user = rs.config
	} else {
		rs.config = configRestore(nil, servers)
		rs.user = configRestore(w, nil)
	}
	rs.hooks = func(content []byte) ([]byte, bool, error) {
		r, err := codex.EditHooks(content, "", "", false)
		if err != nil {
			return nil, false, err
		}
		return r.Data, !r.Remove && len(bytes.TrimSpace(r.Data)) > 0, nil
	}
	return rs
}

// configRestore is the Restore of a config.toml: without the servers
// named, and (w set) without the trust entries of the scope's hooks.json
// that name no handler of the user's in it now. Those are nexus's,
// whatever command they ran (a trust entry's hash does not say), or stale
// ones of handlers gone from the file.
func configRestore(w *writers, servers []string) installpkg.Restore {
	return func(content []byte) ([]byte, bool, error) {
		e := ConfigEdit{RemoveServers: servers}
		if w != nil {
			info, err := InspectConfig(content)
			if err != nil {
				return nil, false, err
			}
			hooks, _, err := w.codex.Read(w.hooksName, codex.MaxHooksFile)
			if err != nil {
				return nil, false, err
			}
			all, err := codex.ListHooks(w.hooksKey, hooks)
			if err != nil {
				return nil, false, err
			}
			users := map[string]bool{}
			for _, h := range all {
				users[h.Key] = !h.Nexus
			}
			for k, st := range info.Hooks {
				if strings.HasPrefix(k, w.hooksKey+":") && !users[k] && st.TrustedHash != "" {
					e.RemoveTrust = append(e.RemoveTrust, TrustEntry{k, st.TrustedHash})
				}
			}
			slices.SortFunc(e.RemoveTrust, func(a, b TrustEntry) int { return strings.Compare(a.Key, b.Key) })
		}
		r, err := EditConfig(content, e)
		if err != nil {
			return nil, false, err
		}
		return r.Data, len(bytes.TrimSpace(r.Data)) > 0, nil
	}
}

type pruned struct {
	a       *installpkg.Anchor
	name    string
	restore installpkg.Restore
}

// prune lists the files whose backups an uninstall prunes, each once: the
// user's config.toml, when it is not the scope's, only when this run
// took trust entries out of it (its other backups may be another scope's).
func (rs sharedRestores) prune(userEdited bool) []pruned {
	out := []pruned{{rs.w.codex, rs.w.configName, rs.config}, {rs.w.codex, rs.w.hooksName, rs.hooks}}
	if rs.w.user != nil && !rs.userIsConfig && userEdited {
		out = append(out, pruned{rs.w.user, rs.w.userName, rs.user})
	}
	return out
}

// bothScopes warns, installing in one scope, when nexus's hooks are in the
// other's hooks.json too: Codex runs the hooks of both, so every event
// would reach nexus twice (the doctor says so too).
func bothScopes(f Folders, req installpkg.Request) *installpkg.Change {
	other := installpkg.ScopeUser
	if req.Scope == installpkg.ScopeUser {
		other = installpkg.ScopeProject
	}
	if req.Project == "" || req.Home == "" {
		return nil
	}
	of, err := ScopeFolders(other, req.Project, req.Home, req.Getenv)
	if err != nil || of.Codex == f.Codex {
		return nil
	}
	data, err := readFile(of.Hooks(), codex.MaxHooksFile)
	if err != nil {
		return nil
	}
	if hooks, err := codex.NexusHooks(resolve(of.Hooks()), data); err != nil || len(hooks) == 0 {
		return nil
	}
	ch := installpkg.BothScopes(codex.Name, "nexus's hooks are registered", "Codex runs the hooks of both scopes", of.Hooks(), req)
	return &ch
}

// configResult runs a config edit for EditFile.
func configResult(before []byte, e ConfigEdit, file string) ([]byte, bool, []string, error) {
	r, err := EditConfig(before, e)
	if err != nil {
		return nil, false, r.Notes, fmt.Errorf("%s: %w", file, err)
	}
	// A config nexus emptied (it held only nexus's tables) goes.
	remove := r.Changed && len(strings.TrimSpace(string(r.Data))) == 0
	return r.Data, remove, r.Notes, nil
}

// editTrust updates the user's config.toml: with --trust-hooks, a trust
// entry for each handler nexus wrote; always, the removal of entries
// trusting handlers of nexus's that are gone (uninstalled, or rewritten
// with another command), while they still hold the hash of what nexus
// wrote. No other entry is touched.
func (h Host) editTrust(w *writers, f Folders, oldHooks, newHooks []byte, req installpkg.Request, install bool, restore installpkg.Restore) (*installpkg.Change, error) {
	key := w.hooksKey
	old, _ := codex.NexusHooks(key, oldHooks) // an unreadable old file was refused above
	cur, err := codex.NexusHooks(key, newHooks)
	if err != nil {
		return nil, err
	}
	e := ConfigEdit{}
	keep := map[TrustEntry]bool{}
	for _, c := range cur {
		keep[TrustEntry{c.Key, c.Hash}] = true
		if install && req.TrustHooks {
			e.Trust = append(e.Trust, TrustEntry{c.Key, c.Hash})
		}
	}
	for _, o := range old {
		if t := (TrustEntry{o.Key, o.Hash}); !keep[t] {
			e.RemoveTrust = append(e.RemoveTrust, t)
		}
	}
	if len(e.Trust) == 0 && len(e.RemoveTrust) == 0 {
		return nil, nil
	}
	if f.UserConfig == "" {
		return nil, errors.New("hook trust lives in the user's config.toml, and the home folder is unknown")
	}
	ch, err := installpkg.EditFile(w.user, w.userName, maxConfigFile, req.Options, restore, func(before []byte, _ bool) ([]byte, bool, []string, error) {
		return configResult(before, e, f.UserConfig)
	})
	return &ch, err
}

// trustNotes tell the user, after an install, whether Codex will run the
// hooks nexus wrote (it runs only reviewed ones) and, for a project, reads
// the project's .codex at all (only in a trusted project).
func trustNotes(f Folders, hooksKey string, hooks []byte, install, dryRun bool) []string {
	if !install || f.UserConfig == "" {
		return nil
	}
	cfg, _, _ := readUserConfig(f.UserConfig)
	entries, err := codex.NexusHooks(hooksKey, hooks)
	if err != nil || len(entries) == 0 {
		return nil
	}
	var notes []string
	if untrusted := UntrustedHooks(cfg, entries); len(untrusted) > 0 && !dryRun {
		notes = append(notes, fmt.Sprintf("Codex runs these %d hooks only once you have reviewed them, and until then it runs no nexus hook at all (no gate, no tracking) without a word: start `codex` in the project, type /hooks and trust the nexus hooks, or run this command again with --trust-hooks to record that trust in %s for exactly these hooks", len(untrusted), f.UserConfig))
	}
	if f.Scope == installpkg.ScopeProject && cfg.Projects[f.Project] != "trusted" {
		notes = append(notes, fmt.Sprintf("Codex reads %s (these hooks, the MCP server, the agents) only in a trusted project, and %s does not trust %s: start `codex` in the project and trust it when asked (or run `codex exec --trust` there once)", f.Codex, f.UserConfig, f.Project))
	}
	return notes
}

// UntrustedHooks lists the entries Codex would not run: no trust entry, or
// one for another hash (modified), or disabled.
func UntrustedHooks(cfg ConfigInfo, entries []codex.HookEntry) []codex.HookEntry {
	var out []codex.HookEntry
	for _, e := range entries {
		st, ok := cfg.Hooks[e.Key]
		if !ok || st.TrustedHash != e.Hash || !st.Enabled {
			out = append(out, e)
		}
	}
	return out
}

// writers are the anchors a scope's files are written beneath.
type writers struct {
	// codex holds the scope's Codex folder and its skills folder: the
	// project (nothing in it may be a symlink), or the filesystem root for
	// the user's folders, which may lead into a dotfiles folder.
	codex *installpkg.Anchor
	// agents is codex, or for the user scope an anchor whose plain part is
	// the skills' folder.
	agents                    *installpkg.Anchor
	codexPrefix, agentsPrefix string
	// configName and hooksName are the scope's config.toml and hooks.json
	// beneath the codex anchor; hooksKey is hooks.json as Codex names it in
	// its trust keys (symlinks resolved).
	configName, hooksName, hooksKey string
	// user holds the user's config.toml (hook trust), wherever it leads.
	user     *installpkg.Anchor
	userName string
}

func openWriters(f Folders) (*writers, error) {
	w := &writers{}
	root := string(filepath.Separator)
	dir := root
	if f.Scope == installpkg.ScopeProject {
		dir = f.Project
	}
	var err error
	if w.codex, err = installpkg.OpenAnchor(dir, false); err != nil {
		return nil, err
	}
	if w.codexPrefix, err = w.codex.NameOf(f.Codex); err != nil {
		w.close()
		return nil, err
	}
	w.agents = w.codex
	if w.agentsPrefix, err = w.codex.NameOf(f.Agents); err != nil {
		w.close()
		return nil, err
	}
	w.configName, w.hooksName, w.hooksKey = path.Join(w.codexPrefix, ConfigFile), path.Join(w.codexPrefix, codex.HooksFile), resolve(f.Hooks())
	if f.Scope == installpkg.ScopeUser {
		// The user's config.toml and hooks.json may lead into a dotfiles
		// folder: they are written where they lead. Inside the Codex and
		// skills folders nothing else nexus touches may be a symlink; the
		// folders themselves were resolved.
		if w.configName, err = w.codex.NameOf(resolve(f.Config())); err != nil {
			w.close()
			return nil, err
		}
		if w.hooksName, err = w.codex.NameOf(w.hooksKey); err != nil {
			w.close()
			return nil, err
		}
		w.codex.PlainFrom = w.codexPrefix
		if w.agents, err = installpkg.OpenAnchor(root, false); err != nil {
			w.close()
			return nil, err
		}
		w.agents.PlainFrom = w.agentsPrefix
	}
	if f.UserConfig != "" {
		if w.user, err = installpkg.OpenAnchor(root, false); err != nil {
			w.close()
			return nil, err
		}
		if w.userName, err = w.user.NameOf(f.UserConfig); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

func (w *writers) close() {
	for _, a := range []*installpkg.Anchor{w.codex, w.agents, w.user} {
		if a != nil {
			a.Close()
		}
	}
}

// readUserConfig reads what nexus needs from the user's config.toml (an
// empty one when it is missing).
func readUserConfig(file string) (ConfigInfo, bool, error) {
	a, err := installpkg.OpenAnchor(filepath.Dir(file), false)
	if err != nil {
		return ConfigInfo{}, false, err
	}
	defer a.Close()
	b, exists, err := a.Read(filepath.Base(file), maxConfigFile)
	if err != nil {
		return ConfigInfo{}, false, err
	}
	info, err := InspectConfig(b)
	return info, exists, err
}

// DefaultModels is the model per model_tier when codex.models sets none:
// none, so each role runs on the session's model.
var DefaultModels = map[string]string{}

// Models reads codex.models: a model per model_tier, "inherit" (or empty)
// for the session's model, MODEL:EFFORT to set the reasoning effort too.
func Models(configured map[string]any) (map[string]Agent, error) {
	out := map[string]Agent{}
	for tier, v := range configured {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("config codex.models.%s: expected a model name (a Codex model id, MODEL:EFFORT or inherit), not %v", tier, v)
		}
		s = strings.TrimSpace(s)
		if s == "" || s == "inherit" {
			continue
		}
		model, effort, _ := strings.Cut(s, ":")
		out[tier] = Agent{Model: strings.TrimSpace(model), ReasoningEffort: strings.TrimSpace(effort)}
	}
	return out, nil
}

// CatalogFiles renders the agents (paths relative to the Codex folder) and
// skills (relative to the skills' parent folder) install writes, from the
// distribution, and the nexus-core version they come from.
func (h Host) CatalogFiles(req installpkg.Request) (agents, skills []installpkg.OwnedFile, coreVersion string, err error) {
	p := h.Profile(host.Env{Project: req.Project, Home: req.Home})
	c, err := req.Catalog(p)
	if err != nil {
		return nil, nil, "", err
	}
	models, err := Models(req.Models)
	if err != nil {
		return nil, nil, "", fmt.Errorf("render the agents and skills: %w", err)
	}
	for _, a := range c.Agents {
		m := models[a.Tier]
		b, err := AgentTOML(Agent{ID: a.ID, Description: a.Description, Instructions: strings.TrimRight(a.Body, "\n") + "\n\n" + agentNotes(c, a), Model: m.Model, ReasoningEffort: m.ReasoningEffort})
		if err != nil {
			return nil, nil, "", fmt.Errorf("render the agents and skills: %w", err)
		}
		agents = append(agents, installpkg.OwnedFile{Path: AgentPath(a.ID), Content: b})
	}
	for _, s := range c.Skills {
		b, err := SkillMD(Skill{ID: s.ID, Description: s.Description, Body: s.Body})
		if err != nil {
			return nil, nil, "", fmt.Errorf("render the agents and skills: %w", err)
		}
		skills = append(skills, installpkg.OwnedFile{Path: strings.TrimPrefix(codex.SkillPath(s.ID), AgentsHomeDir+"/"), Content: b})
	}
	return agents, skills, c.Version, nil
}

// agentNotes are the harness notes nexus-core's consumer guide (§7) asks
// for beside the neutral body.
func agentNotes(c *catalog.Catalog, a catalog.Agent) string {
	var b strings.Builder
	b.WriteString("## Working in Codex (nexus harness notes)\n\n")
	b.WriteString("- **Reporting to Lead**: you run as a Codex subagent that Lead spawned with spawn_agent. Your final message is your report: Lead receives it through wait_agent when you finish, and there is no other channel to Lead, so put everything Lead needs in it (in the report format above). Lead may send you a follow-up with send_input; answer it the same way. Subagents do not talk to each other.\n")
	fmt.Fprintf(&b, "- **nexus tools**: tools named %s* in these instructions are nexus's MCP tools, in the namespace mcp__%s (find them with tool_search when they are not offered directly; Codex's hooks name them %s). The artifact tool is %s (filename, content): it saves deliverables under .nexus/state/artifacts/. The task list is %s (read-only for you unless Lead says otherwise); %s and %s belong to Lead.\n",
		c.ToolPrefix, codex.MCPServerName, c.ToolRef("*"), c.ToolRef("artifact_write"), c.ToolRef("task_list"), c.ToolRef("task_add"), c.ToolRef("task_update"))
	if len(a.Capabilities) > 0 {
		fmt.Fprintf(&b, "- **Capabilities** (%s): ", strings.Join(a.Capabilities, ", "))
		if len(a.Denied) > 0 {
			fmt.Fprintf(&b, "nexus denies you %s. ", strings.Join(a.Denied, ", "))
		}
		if slices.Contains(a.Capabilities, "no_file_edit") {
			b.WriteString("That includes apply_patch, and a shell command that writes files (a redirection, sed -i, an apply_patch heredoc). ")
		}
		b.WriteString("nexus's gate checks every call and denies what your capabilities block; the denial says what to do instead, usually: report to Lead.\n")
	}
	b.WriteString("- **Project knowledge**: .nexus/memory/, .nexus/context/ and .nexus/rules/ hold the project's notes, context and rules; read what bears on your task.\n")
	return b.String()
}

// InstallHelp is the help of `nexus install codex` (install) and
// `nexus uninstall codex`.
func (Host) InstallHelp(install bool) string {
	if !install {
		return `Remove what "nexus install codex" wrote: the hook handlers marked --managed in
hooks.json, the "nexus" (and "nauro") MCP servers in config.toml when they run nexus, the
trust entries of those hooks in the user's config.toml while they still hold the hash of
what nexus wrote, and the agent and skill files nexus renders from the distribution in use
when its records say nexus wrote them and they are unchanged. Every other byte of
config.toml and hooks.json stays as it is; nothing is written or removed through a symlink.
The backups nexus made of a file (<file>.nexus-backup-<time>) are removed once the file is
restored and holds everything they hold; any other backup is named, with why it stays.`
	}
	return `Register nexus with Codex CLI.

"nexus install codex" writes, in the scope's Codex folder:

  --scope project   .codex/ in the project, and the skills in .agents/skills/
  --scope user      $CODEX_HOME (default ~/.codex), and the skills in ~/.agents/skills/

  config.toml   [mcp_servers.nexus] running "nexus mcp --host codex" (and [mcp_servers.nauro]
                for the decision store); every other byte of the file is kept
  hooks.json    nexus's handlers ("nexus hook --host codex --managed EVENT") for SessionStart,
                UserPromptSubmit, PreToolUse, PostToolUse, SubagentStart, SubagentStop and
                SessionEnd, after your own
  agents/<id>.toml   the nine roles (developer_instructions = the role's body; model per
                model_tier from codex.models, none by default)
  .agents/skills/<id>/SKILL.md   the skills (nx-plan, nx-run, nx-sync, nx-init)

Codex runs a hook only after you have reviewed it (/hooks in Codex), and reads a project's
.codex/ only in a trusted project; without both, Codex runs without nexus, silently.
--trust-hooks records the trust of exactly the hooks nexus wrote ([hooks.state] in the user's
config.toml); nexus doctor reports untrusted hooks and an untrusted project as errors.

It prints the diff of every file it changes. Before changing a file that holds anything
besides nexus's own entries it keeps a copy of it (<file>.nexus-backup-<time>); uninstall
removes those copies again once the file is restored. Running it again changes nothing
(--dry-run shows the diff and writes nothing). Entries and files it did not write are never
touched, an agent or skill file edited since nexus wrote it is left alone (and named) unless
--force is given, and any symlink on the way to a file of the project is refused.`
}
