package claude

// FindRegistered finds what `nexus install claude` registered (the
// project scope first, as Claude Code would run both), for the probes to
// run as Claude Code does; nil when nexus is not registered.
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
		if !ok {
			continue
		}
		reg := &Registered{Where: r.Settings, Hook: hook, Env: r.Env}
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
		if r.MCP != nil && r.MCP.Ours {
			reg.MCP = append([]string{r.MCP.Command}, r.MCP.Args...)
			reg.MCPEnv = r.MCP.Env
		}
		if r.Nauro != nil && r.Nauro.Ours {
			reg.Nauro = append([]string{r.Nauro.Command}, r.Nauro.Args...)
			reg.NauroEnv = r.Nauro.Env
		}
		return reg
	}
	return nil
}
