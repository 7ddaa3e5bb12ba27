package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/doctor/mcpprobe"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/codex"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// nexus doctor's checks of the Codex setup (doctor.HostChecker): what
// install registered in each scope, whether Codex will run it at all (hook
// trust, project trust), the agent and skill files, a canary PreToolUse
// through the registered hook and an MCP handshake with the registered
// server, both in the environment Codex gives them.

// DoctorChecks implements doctor.HostChecker.
func (h Host) DoctorChecks(env doctor.HostEnv) []doctor.Check {
	base := checkBase{env: env, getenv: env.Install.Getenv}
	return []doctor.Check{
		Registration{base},
		Catalog{base, h},
		HookCanary{base},
		MCPProbe{base},
	}
}

type checkBase struct {
	env    doctor.HostEnv
	getenv func(string) string
}

// scope is one scope's registration as found on disk.
type scope struct {
	Folders
	cfg      ConfigInfo
	cfgErr   error
	user     ConfigInfo // the user's config.toml (hook and project trust)
	userErr  error
	hooks    []codex.HookEntry
	hooksErr error
}

// installed reports whether nexus is registered in the scope at all.
func (s scope) installed() bool { return s.server() != nil || len(s.hooks) > 0 }

func (s scope) server() *ServerInfo {
	if sv, ok := s.cfg.Servers[codex.MCPServerName]; ok {
		return &sv
	}
	return nil
}

func (s scope) flag() string {
	if s.Scope == installpkg.ScopeUser {
		return " --scope user"
	}
	return ""
}

// hookCommand is the registered PreToolUse command line ("" when none).
func (s scope) hookCommand(event string) string {
	for _, e := range s.hooks {
		if e.Hook.Event == event {
			return e.Hook.Command
		}
	}
	return ""
}

func (b checkBase) scopes() []scope {
	var out []scope
	for _, sc := range []string{installpkg.ScopeProject, installpkg.ScopeUser} {
		if sc == installpkg.ScopeProject && b.env.Project == "" || sc == installpkg.ScopeUser && b.env.Home == "" {
			continue
		}
		f, err := ScopeFolders(sc, b.env.Project, b.env.Home, b.getenv)
		if err != nil {
			continue
		}
		s := scope{Folders: f}
		s.cfg, _, s.cfgErr = readUserConfig(f.Config())
		if f.UserConfig != "" {
			s.user, _, s.userErr = readUserConfig(f.UserConfig)
		}
		if data, err := readFile(f.Hooks(), codex.MaxHooksFile); err != nil {
			s.hooksErr = err
		} else {
			s.hooks, s.hooksErr = codex.NexusHooks(resolve(f.Hooks()), data)
		}
		out = append(out, s)
	}
	return out
}

func readFile(p string, limit int64) ([]byte, error) {
	a, err := installpkg.OpenAnchor(filepath.Dir(p), false)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	b, _, err := a.Read(filepath.Base(p), limit)
	return b, err
}

// Registration checks what `nexus install codex` registered and whether
// Codex will run it: in every scope where nexus is registered, a nexus
// hook for each event install writes and the nexus MCP server, running
// this nexus; each of those hooks trusted in the user's config.toml (Codex
// skips an untrusted hook without a word); for a project install, the
// project trusted (Codex ignores an untrusted project's .codex). --fix
// re-runs the install for missing or outdated entries; trust is the
// user's to give, so it is never fixed.
type Registration struct{ checkBase }

func (Registration) Name() string { return "codex-install" }

func (c Registration) Run(context.Context) []doctor.Finding {
	if c.env.Executable == "" {
		return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is, so its registration cannot be compared", "run nexus by its full path")}
	}
	var out []doctor.Finding
	var installed []scope
	for _, s := range c.scopes() {
		for _, err := range []error{s.cfgErr, s.hooksErr, s.userErr} {
			if err != nil {
				out = append(out, doctor.Fault(err.Error()+"; Codex cannot read it either", "fix the file by hand (nexus does not rewrite a file it cannot parse)"))
			}
		}
		if s.installed() {
			installed = append(installed, s)
		}
	}
	if len(installed) == 0 {
		if len(out) > 0 {
			return out
		}
		return []doctor.Finding{doctor.OK("nexus is not registered with Codex (run `nexus install codex` to use it there)")}
	}
	withHooks := 0
	for _, s := range installed {
		if len(s.hooks) > 0 {
			withHooks++
		}
		out = append(out, c.scope(s)...)
	}
	if withHooks > 1 {
		out = append(out, doctor.Warn("nexus hooks are registered in both the project and the user scope: Codex runs both, so every event reaches nexus twice",
			"remove one: `nexus uninstall codex --scope user` (or --scope project)"))
	}
	if doctor.AllOK(out) {
		var where []string
		for _, s := range installed {
			where = append(where, fmt.Sprintf("%s scope (%s)", s.Scope, s.Codex))
		}
		out = append([]doctor.Finding{doctor.OK("hooks for %d events, trusted, and the MCP server run this nexus (%s) in the %s",
			len(codex.InstalledHooks), c.env.Executable, strings.Join(where, "; "))}, out...)
	}
	return out
}

func (c Registration) scope(s scope) []doctor.Finding {
	fix := fmt.Sprintf("run `nexus install codex%s` with this nexus (it keeps a backup and leaves other entries alone)", s.flag())
	reinstall := doctor.Once(func(context.Context) (string, error) {
		req := c.env.Install
		req.Scope, req.Project, req.Home, req.Command = s.Scope, c.env.Project, c.env.Home, c.env.Executable
		req.CoreDir = registeredCore(s, c.env.ChosenCore)
		req.Catalog = nil // the agents and skills are the catalog check's
		changes, err := Host{}.Install(req)
		var did []string
		for _, ch := range changes {
			if ch.Changed {
				did = append(did, "updated "+ch.Path)
			}
		}
		if len(did) == 0 && err == nil {
			return "", nil
		}
		return fmt.Sprintf("ran the %s-scope install: %s", s.Scope, strings.Join(did, "; ")), err
	})
	var out []doctor.Finding
	var missing []string
	others := map[string][]string{}
	for _, ih := range codex.InstalledHooks {
		cmd := s.hookCommand(ih.Event)
		if cmd == "" {
			missing = append(missing, ih.Event)
			continue
		}
		if exe := commandExecutable(cmd); !doctor.SameExecutable(exe, c.env.Executable) {
			others[exe] = append(others[exe], ih.Event)
		}
	}
	if len(missing) > 0 {
		out = append(out, doctor.Fault(fmt.Sprintf("%s has no nexus hook for %s, so nexus never sees those events", s.Hooks(), strings.Join(missing, ", ")), fix).RepairedBy(reinstall))
	}
	exes := make([]string, 0, len(others))
	for exe := range others {
		exes = append(exes, exe)
	}
	sort.Strings(exes)
	for _, exe := range exes {
		out = append(out, doctor.OtherExecutable(fmt.Sprintf("the nexus hooks for %s in %s", strings.Join(others[exe], ", "), s.Hooks()), "run", exe, c.env.Executable, fix, reinstall))
	}
	switch sv := s.server(); {
	case sv == nil:
		out = append(out, doctor.Fault(fmt.Sprintf("%s registers no %q MCP server, so the nexus tools are missing in Codex", s.Config(), codex.MCPServerName), fix).RepairedBy(reinstall))
	case !sv.Nexus:
		out = append(out, doctor.Fault(fmt.Sprintf("the MCP server %q in %s runs %s, not nexus, so the nexus tools are missing", codex.MCPServerName, s.Config(), strings.TrimSpace(sv.Command+" "+strings.Join(sv.Args, " "))),
			"rename or remove that server yourself (nexus never touches another tool's entry), then run `nexus install codex"+s.flag()+"`"))
	case !doctor.SameExecutable(sv.Command, c.env.Executable):
		out = append(out, doctor.OtherExecutable(fmt.Sprintf("the MCP server %q in %s", codex.MCPServerName, s.Config()), "runs", sv.Command, c.env.Executable, fix, reinstall))
	}
	if untrusted := UntrustedHooks(s.user, s.hooks); len(untrusted) > 0 {
		var events []string
		modified := 0
		for _, e := range untrusted {
			events = append(events, e.Hook.Event)
			if st, ok := s.user.Hooks[e.Key]; ok && st.TrustedHash != "" && st.TrustedHash != e.Hash {
				modified++
			}
		}
		what := "untrusted"
		if modified > 0 {
			what = fmt.Sprintf("untrusted (%d of them changed since they were reviewed)", modified)
		}
		out = append(out, doctor.Fault(fmt.Sprintf("Codex skips nexus's hooks for %s in %s without a word: they are %s in %s, so Codex runs with no nexus gate and no tracking",
			strings.Join(events, ", "), s.Hooks(), what, s.UserConfig),
			fmt.Sprintf("review them: start `codex`, type /hooks and trust the nexus hooks; or run `nexus install codex%s --trust-hooks`, which records the trust of exactly these hooks", s.flag())))
	}
	if s.Scope == installpkg.ScopeProject && s.user.Projects[s.Project] != "trusted" {
		out = append(out, doctor.Fault(fmt.Sprintf("Codex ignores %s (the nexus hooks, MCP server and agents): the project %s is not trusted in %s", s.Codex, s.Project, s.UserConfig),
			"start `codex` in the project and trust it when asked, or run `codex exec --trust` there once (it writes [projects.\""+s.Project+"\"] trust_level = \"trusted\")"))
	}
	return out
}

// registeredCore is the --core the scope's commands were registered with,
// else chosen.
func registeredCore(s scope, chosen string) string {
	for _, e := range s.hooks {
		if d := coreOf(commandWords(e.Hook.Command)); d != "" {
			return d
		}
	}
	if sv := s.server(); sv != nil {
		if d := coreOf(sv.Args); d != "" {
			return d
		}
	}
	return chosen
}

// commandWords are a command line's literal words.
func commandWords(command string) []string {
	f, err := codex.ParseShell(command)
	if err != nil || len(f.Stmts) == 0 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	var out []string
	for _, w := range call.Args {
		out = append(out, codex.LitText(w))
	}
	return out
}

func coreOf(words []string) string {
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "--core" {
			return words[i+1]
		}
	}
	return ""
}

// commandExecutable is the program a hook command line runs (its first
// word, unquoted), "" when it cannot be read.
func commandExecutable(command string) string {
	f, err := codex.ParseShell(command)
	if err != nil || len(f.Stmts) == 0 {
		return ""
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return ""
	}
	return codex.LitText(call.Args[0])
}

// Catalog checks the agent and skill files install wrote in each scope
// where nexus is registered (or has a record): present and current.
// Missing or outdated files are re-installed by --fix; a file someone
// edited is only reported.
type Catalog struct {
	checkBase
	host Host
}

func (Catalog) Name() string { return "codex-agents" }

func (c Catalog) Run(context.Context) []doctor.Finding {
	var out []doctor.Finding
	checked := 0
	for _, s := range c.scopes() {
		agentsRec, err1 := owned.ReadRecord(s.Codex)
		skillsRec, err2 := owned.ReadRecord(s.Agents)
		if err := firstErr(err1, err2); err != nil {
			out = append(out, doctor.Fault(err.Error(), "move the file aside and run `nexus install codex"+s.flag()+"`"))
			continue
		}
		if agentsRec == nil && skillsRec == nil && !s.installed() {
			continue
		}
		checked++
		if c.env.Install.Catalog == nil {
			continue
		}
		req := c.env.Install
		req.Scope, req.Project, req.Home, req.Command = s.Scope, c.env.Project, c.env.Home, c.env.Executable
		agents, skills, coreVersion, err := c.host.CatalogFiles(req)
		if err != nil {
			// The distribution and config checks report the cause.
			return append(out, doctor.OK("not checked: the agents and skills cannot be rendered (%v)", err))
		}
		fix := fmt.Sprintf("run `nexus install codex%s` (it never overwrites a file you edited)", s.flag())
		reinstall := doctor.InstallRepair(s.Scope, func() ([]installpkg.Change, error) {
			req.Version, req.CoreVersion, req.CoreDir = c.env.Version, coreVersion, registeredCore(s, c.env.ChosenCore)
			return c.host.Install(req)
		})
		for _, set := range []struct {
			dir   string
			files []installpkg.OwnedFile
		}{{s.Codex, agents}, {s.Agents, skills}} {
			st, err := owned.Check(set.dir, set.files)
			if err != nil {
				out = append(out, doctor.Fault(err.Error(), fix))
				continue
			}
			out = append(out, doctor.OwnedFindings(doctor.OwnedFiles{
				Dir: set.dir, States: st, Install: "nexus install codex" + s.flag(), Reinstall: reinstall,
				Missing: func(m []string) string {
					return fmt.Sprintf("%s lacks %s, so Codex cannot spawn those roles or list those skills", set.dir, strings.Join(m, ", "))
				},
				Kind: [2]string{"role or skill", "roles or skills"},
				Current: func(n int) string {
					return fmt.Sprintf("%d agent or skill files in %s are present and current", n, set.dir)
				},
			})...)
		}
	}
	if checked == 0 {
		return []doctor.Finding{doctor.OK("nexus is not registered with Codex; no agents or skills to check")}
	}
	return out
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// registered is the scope whose commands the probes run: the project's
// when nexus is registered there, else the user's; nil when none.
func (b checkBase) registered() *scope {
	for _, s := range b.scopes() {
		if s.installed() {
			return &s
		}
	}
	return nil
}

const probeTimeout = 10 * time.Second

// HookCanary sends Codex's PreToolUse for an apply_patch by Lead in a
// scratch project with no tasks.json through the PreToolUse hook command
// install registered (run as Codex runs it, /bin/bash -c, with this
// environment: Codex gives hooks its own), or through this nexus when
// nothing is registered. The gate must deny the unplanned edit; any other
// answer means Codex's hooks do not reach the engine.
type HookCanary struct{ checkBase }

func (HookCanary) Name() string { return "codex-hook" }

func (c HookCanary) Run(ctx context.Context) []doctor.Finding {
	if c.env.NoCore {
		return []doctor.Finding{doctor.Warn("not run: no nexus-core distribution (see the distribution check)", "fix the distribution first")}
	}
	dir, env, err := doctor.Scratch()
	if err != nil {
		return []doctor.Finding{doctor.Fault(err.Error(), "check the temporary folder ($TMPDIR)")}
	}
	defer os.RemoveAll(dir)
	payload, _ := json.Marshal(map[string]any{
		"hook_event_name": codex.PreToolUse, "session_id": "nexus-doctor-canary", "turn_id": "canary", "cwd": dir,
		"transcript_path": filepath.Join(dir, "transcript.jsonl"), "model": "canary", "permission_mode": "bypassPermissions",
		"tool_name": codex.ToolApplyPatch, "tool_use_id": "canary",
		"tool_input": map[string]any{"command": "*** Begin Patch\n*** Add File: canary.txt\n+canary\n*** End Patch\n"},
	})
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	how := ""
	var cmd *exec.Cmd
	if s := c.registered(); s != nil && s.hookCommand(codex.PreToolUse) != "" {
		line := s.hookCommand(codex.PreToolUse) + " --project " + installpkg.ShellQuote(dir)
		cmd = exec.CommandContext(ctx, "/bin/bash", "-c", line)
		how = " (the command registered in " + s.Hooks() + ", run as Codex runs it)"
	} else {
		if c.env.Executable == "" {
			return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is", "run nexus by its full path")}
		}
		args := []string{"hook", "--host", codex.Name, "--project", dir}
		if c.env.CoreDir != "" {
			args = append(args, "--core", c.env.CoreDir)
		}
		cmd = exec.CommandContext(ctx, c.env.Executable, append(args, codex.PreToolUse)...)
	}
	doctor.InScratch(cmd, dir, env)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	fix := "run the same event by hand to see the failure: echo '{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"apply_patch\",\"tool_input\":{\"command\":\"*** Begin Patch\\n*** Add File: x\\n+x\\n*** End Patch\"}}' | nexus hook --host codex PreToolUse; then check .nexus/state/codex/nexus.log"
	if err != nil {
		return []doctor.Finding{doctor.Fault(fmt.Sprintf("`nexus hook --host codex` failed%s: %v%s", how, err, doctor.Tail(stderr.String())), fix)}
	}
	// The denial must be the engine's unplanned-edit rule: a hook that
	// could not load its configuration or distribution denies every call
	// too, naming that problem instead.
	if !host.DeniedFor(stdout.Bytes(), "outside a planned task cycle") {
		got := strings.TrimSpace(stdout.String())
		if got == "" {
			got = "nothing"
		}
		return []doctor.Finding{doctor.Fault(fmt.Sprintf("a canary PreToolUse did not reach the gate%s: expected a denial of an unplanned edit, got %s%s", how, doctor.Clip(got), doctor.Tail(stderr.String())), fix)}
	}
	return []doctor.Finding{doctor.OK("a canary apply_patch PreToolUse through `nexus hook --host codex` reached the engine and was denied as an unplanned edit (%s)%s", took.Round(time.Millisecond), how)}
}

// MCPProbe starts the MCP servers install registered (nexus, and nauro
// when the decision store is served on its own) in a scratch project, in
// the environment Codex gives an MCP server (a few of its own variables and
// what the entry lists), and runs the initialize handshake; nauro must list
// check_decision. Without a registration it probes this nexus's server.
type MCPProbe struct{ checkBase }

func (MCPProbe) Name() string { return "codex-mcp" }

func (c MCPProbe) Run(ctx context.Context) []doctor.Finding {
	if c.env.NoCore {
		return []doctor.Finding{doctor.Warn("not run: no nexus-core distribution (see the distribution check)", "fix the distribution first")}
	}
	dir, _, err := doctor.Scratch()
	if err != nil {
		return []doctor.Finding{doctor.Fault(err.Error(), "check the temporary folder ($TMPDIR)")}
	}
	defer os.RemoveAll(dir)
	type server struct {
		what string
		argv []string
		env  map[string]string
		vars []string
		tool string
	}
	var servers []server
	if s := c.registered(); s != nil && s.server() != nil && s.server().Nexus {
		sv := s.server()
		servers = append(servers, server{fmt.Sprintf("the %q MCP server in %s", codex.MCPServerName, s.Config()), append([]string{sv.Command}, sv.Args...), sv.Env, sv.EnvVars, ""})
		if n, ok := s.cfg.Servers[decisionsapi.ServerName]; ok && n.Nexus {
			servers = append(servers, server{fmt.Sprintf("the %q MCP server in %s", decisionsapi.ServerName, s.Config()), append([]string{n.Command}, n.Args...), n.Env, n.EnvVars, decisionsapi.ToolCheckDecision})
		}
	} else if c.env.Executable != "" {
		argv := []string{c.env.Executable, "mcp", "--host", codex.Name}
		if c.env.CoreDir != "" {
			argv = append(argv, "--core", c.env.CoreDir)
		}
		servers = append(servers, server{"`nexus mcp --host codex`", argv, nil, nil, ""})
	} else {
		return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is", "run nexus by its full path")}
	}
	var out []doctor.Finding
	for _, sv := range servers {
		env := codexServerEnv(sv.env, sv.vars)
		mk := func(ctx context.Context) *exec.Cmd {
			return doctor.InScratch(exec.CommandContext(ctx, sv.argv[0], sv.argv[1:]...), dir, env)
		}
		fix := "run `" + strings.Join(sv.argv, " ") + "` by hand with only HOME, LANG and PATH set (env -i HOME=$HOME LANG=$LANG PATH=$PATH …) and look at what it prints on stderr; Codex passes an MCP server no other variable unless its entry lists it (env, env_vars)"
		out = append(out, mcpprobe.Check(ctx, mcpprobe.Server{What: sv.what, Cmd: mk, Want: sv.tool, Fix: fix}, probeTimeout, mcpprobe.Wording{
			Host:  "Codex",
			Fault: " (in Codex's environment for MCP servers)",
			OK:    ", in Codex's environment for MCP servers (HOME, LANG, PATH, USER, TMPDIR and what its entry lists)",
		}))
	}
	return out
}

// codexServerEnv is the environment Codex gives an MCP server: a few of
// its own variables (HOME, LANG, PATH, USER, TMPDIR; Codex 0.169.0), those
// of vars (env_vars) that are set, and the server's env table.
func codexServerEnv(extra map[string]string, vars []string) []string {
	var env []string
	for _, k := range append([]string{"HOME", "LANG", "PATH", "USER", "TMPDIR"}, vars...) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}
