package claude

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// FindRegistered finds what `nexus install claude` registered (the
// project scope first, as Claude Code would run both), for the probes to
// run as Claude Code does; nil when nexus is not registered.
//
// A project's settings come with its repository, and an entry counts as
// nexus's by its shape alone (" hook --host claude --managed ", a server
// named nexus running `… mcp`): a cloned repository can register any
// program that way. The doctor runs the project scope's commands only
// when they run this very executable; another program is never started
// (the claude-install check reports it). The user's own scope is trusted.
func FindRegistered(proj, home, exe string) *Registered {
	for _, o := range []InstallOptions{
		{Scope: ScopeProject, Project: proj, Command: exe},
		{Scope: ScopeUser, Home: home, Command: exe},
	} {
		if (o.Scope == ScopeProject && proj == "") || (o.Scope == ScopeUser && home == "") {
			continue
		}
		r, err := Inspect(o)
		if err != nil || len(r.Hooks[PreToolUse]) == 0 {
			continue
		}
		hook, ok := SplitCommand(r.Hooks[PreToolUse][0])
		if !ok || o.Scope == ScopeProject && !runsThis(hook[0], exe, proj) {
			continue
		}
		reg := &Registered{Where: r.Settings, MCPWhere: r.MCPFile, Hook: hook, Env: r.Env}
		// Claude Code applies the user's settings env too.
		if o.Scope == ScopeProject && home != "" {
			if u, err := Inspect(InstallOptions{Scope: ScopeUser, Home: home}); err == nil && len(u.Env) > 0 {
				env := map[string]string{}
				for k, v := range u.Env {
					env[k] = v
				}
				for k, v := range r.Env {
					env[k] = v
				}
				reg.Env = env
			}
		}
		trusted := func(s *MCPServer) bool {
			return s != nil && s.Ours && (o.Scope != ScopeProject || runsThis(s.Command, exe, proj))
		}
		if trusted(r.MCP) {
			reg.MCP = append([]string{r.MCP.Command}, r.MCP.Args...)
			reg.MCPEnv = r.MCP.Env
		}
		if trusted(r.Nauro) {
			reg.Nauro = append([]string{r.Nauro.Command}, r.Nauro.Args...)
			reg.NauroEnv = r.Nauro.Env
		}
		return reg
	}
	return nil
}

// runsThis reports whether command (as a settings file names it: a path,
// relative to the project, or a name looked up in PATH) is the file exe.
func runsThis(command, exe, proj string) bool {
	if command == "" || exe == "" {
		return false
	}
	p := command
	switch {
	case !strings.ContainsRune(p, filepath.Separator):
		lp, err := exec.LookPath(p)
		if err != nil {
			return false
		}
		p = lp
	case !filepath.IsAbs(p):
		p = filepath.Join(proj, p)
	}
	a, err := os.Stat(p)
	if err != nil {
		return false
	}
	b, err := os.Stat(exe)
	return err == nil && os.SameFile(a, b)
}
