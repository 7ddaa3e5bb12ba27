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

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/doctor/mcpprobe"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// ClaudeInstall checks what `nexus install claude` registered in Claude
// Code's settings: in every scope where nexus is registered, a nexus hook
// for each event the installer writes and the nexus MCP server, all running
// this executable. --fix re-runs the installer for that scope, which adds
// what is missing, points nexus's own entries at this executable and never
// touches anyone else's.
type ClaudeInstall struct {
	Project string // project scope ("" = skip)
	Home    string // user scope ("" = skip)
	// Executable is this nexus (absolute, symlinks resolved).
	Executable string
	// ChosenCore is the distribution chosen by flag or NEXUS_CORE_DIR (as
	// install records it), for repairs of commands that name none.
	ChosenCore string
}

// registeredCore is the --core the scope's commands were registered with
// (any hook or the MCP server), else chosen.
func registeredCore(r *Registration, chosen string) string {
	for _, cmds := range r.Hooks {
		for _, c := range cmds {
			if d := RegisteredCoreDir(c); d != "" {
				return d
			}
		}
	}
	if r.MCP != nil {
		for i := 0; i+1 < len(r.MCP.Args); i++ {
			if r.MCP.Args[i] == "--core" {
				return r.MCP.Args[i+1]
			}
		}
	}
	return chosen
}

func (ClaudeInstall) Name() string { return "claude-install" }

func (c ClaudeInstall) Run(context.Context) []doctor.Finding {
	if c.Executable == "" {
		return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is, so its registration cannot be compared", "run nexus by its full path")}
	}
	var regs []*Registration
	var out []doctor.Finding
	for _, o := range c.scopes() {
		r, err := Inspect(o)
		if err != nil {
			out = append(out, doctor.Fault(err.Error(), "check the file's permissions"))
			continue
		}
		for _, u := range r.Unreadable {
			out = append(out, doctor.Fault(u+"; Claude Code cannot read it either", "fix the JSON by hand (nexus does not rewrite a file it cannot parse)"))
		}
		regs = append(regs, r)
	}
	var installed []*Registration
	for _, r := range regs {
		if r.Installed() {
			installed = append(installed, r)
		}
	}
	if len(installed) == 0 {
		if len(out) > 0 {
			return out
		}
		var files []string
		for _, r := range regs {
			files = append(files, r.Settings, r.MCPFile)
		}
		return []doctor.Finding{doctor.Warn("nexus is not registered with Claude Code (no nexus hooks or MCP server in "+strings.Join(files, ", ")+")",
			"run `nexus install claude` in the project (or `nexus install claude --scope user` for every project); the doctor does not choose a scope for you")}
	}
	withHooks := 0
	for _, r := range installed {
		if len(r.Hooks) > 0 {
			withHooks++
		}
		out = append(out, c.scope(r)...)
	}
	if withHooks > 1 {
		out = append(out, doctor.Warn("nexus hooks are registered in both the project and the user scope: Claude Code runs both, so every event reaches nexus twice",
			"remove one: `nexus uninstall claude --scope user` (or --scope project)"))
	}
	if doctor.AllOK(out) {
		var where []string
		for _, r := range installed {
			where = append(where, fmt.Sprintf("%s scope (%s, %s)", r.Scope, r.Settings, r.MCPFile))
		}
		servers := fmt.Sprintf("the MCP server %q", claude.MCPServerName)
		for _, r := range installed {
			if r.Nauro != nil && r.Nauro.Ours {
				servers = fmt.Sprintf("the MCP servers %q and %q", claude.MCPServerName, decisionsapi.ServerName)
			}
		}
		out = append([]doctor.Finding{doctor.OK("hooks for %d events and %s run this nexus (%s) in the %s",
			len(InstalledEvents), servers, c.Executable, strings.Join(where, "; "))}, out...)
	}
	return out
}

func (c ClaudeInstall) scopes() []InstallOptions {
	var out []InstallOptions
	if c.Project != "" {
		out = append(out, InstallOptions{Scope: ScopeProject, Project: c.Project, Command: c.Executable})
	}
	if c.Home != "" {
		out = append(out, InstallOptions{Scope: ScopeUser, Home: c.Home, Command: c.Executable})
	}
	return out
}

// scope checks one scope where nexus is registered.
func (c ClaudeInstall) scope(r *Registration) []doctor.Finding {
	o := InstallOptions{Scope: r.Scope, Project: c.Project, Home: c.Home, Command: c.Executable, CoreDir: registeredCore(r, c.ChosenCore)}
	flag := ""
	if r.Scope == ScopeUser {
		flag = " --scope user"
	}
	fix := fmt.Sprintf("run `nexus install claude%s` with this nexus (it keeps a backup and leaves other entries alone)", flag)
	reinstall := doctor.Once(func(context.Context) (string, error) {
		changes, err := Install(o)
		var did []string
		for _, ch := range changes {
			if !ch.Changed {
				continue
			}
			d := "updated " + ch.Path
			if ch.Backup != "" {
				d += " (previous content in " + filepath.Base(ch.Backup) + ")"
			}
			did = append(did, d)
		}
		if len(did) == 0 && err == nil {
			return "", nil
		}
		return fmt.Sprintf("ran the %s-scope install: %s", r.Scope, strings.Join(did, "; ")), err
	})
	var out []doctor.Finding
	var missing []string
	others := map[string][]string{} // other executable → events
	dups := []string{}
	for _, ie := range InstalledEvents {
		cmds := r.Hooks[ie.Event]
		if len(cmds) == 0 {
			missing = append(missing, ie.Event)
			continue
		}
		if len(cmds) > 1 {
			dups = append(dups, ie.Event)
		}
		if exe := HookExecutable(cmds[0]); !doctor.SameExecutable(exe, c.Executable) {
			others[exe] = append(others[exe], ie.Event)
		}
	}
	if len(missing) > 0 {
		out = append(out, doctor.Fault(fmt.Sprintf("%s has no nexus hook for %s, so nexus never sees those events", r.Settings, strings.Join(missing, ", ")), fix).RepairedBy(reinstall))
	}
	exes := make([]string, 0, len(others))
	for exe := range others {
		exes = append(exes, exe)
	}
	sort.Strings(exes)
	for _, exe := range exes {
		events := others[exe]
		out = append(out, doctor.OtherExecutable(fmt.Sprintf("the nexus hooks for %s in %s", strings.Join(events, ", "), r.Settings), "run", exe, c.Executable, fix, reinstall))
	}
	if len(dups) > 0 {
		out = append(out, doctor.Warn(fmt.Sprintf("%s has more than one nexus hook for %s, so nexus runs more than once per event", r.Settings, strings.Join(dups, ", ")),
			fmt.Sprintf("run `nexus uninstall claude%s` and then `nexus install claude%s`", flag, flag)))
	}
	switch {
	case r.MCP == nil:
		out = append(out, doctor.Fault(fmt.Sprintf("%s registers no %q MCP server, so the nexus tools are missing in Claude Code", r.MCPFile, claude.MCPServerName), fix).RepairedBy(reinstall))
	case !r.MCP.Ours:
		out = append(out, doctor.Fault(fmt.Sprintf("the MCP server %q in %s runs %s, not nexus, so the nexus tools are missing", claude.MCPServerName, r.MCPFile, strings.TrimSpace(r.MCP.Command+" "+strings.Join(r.MCP.Args, " "))),
			"rename or remove that server yourself (nexus never touches another tool's entry), then run `nexus install claude"+flag+"`"))
	case !doctor.SameExecutable(r.MCP.Command, c.Executable):
		out = append(out, doctor.OtherExecutable(fmt.Sprintf("the MCP server %q in %s", claude.MCPServerName, r.MCPFile), "runs", r.MCP.Command, c.Executable, fix, reinstall))
	}
	return out
}

// Probe runs this nexus as a subprocess in a scratch project, so that the
// user's project and configuration are never touched: the scratch folder is
// both the project and the user configuration folder, the NEXUS_*
// variables and CLAUDE_PROJECT_DIR are dropped, and the distribution is
// passed with --core (none for the built-in one, which the child falls back
// to on its own).
type Probe struct {
	Executable string
	CoreDir    string // "" = the built-in distribution
	// NoCore is set when no usable distribution was located.
	NoCore  bool
	Timeout time.Duration // per subprocess (default 10s)
	// Registered, when set, is what `nexus install claude` registered:
	// the probes then run those command lines, in the environment Claude
	// Code gives them (the settings' env and no shell variables), so they
	// fail where a real session would.
	Registered *Registered
	// Find, when set, looks Registered up when the probe runs (after
	// --fix may have changed the settings).
	Find func() *Registered
}

// Registered is a scope's registered nexus commands.
type Registered struct {
	Where    string   // the settings file (the hooks), for messages
	MCPWhere string   // the MCP servers file (.mcp.json, ~/.claude.json)
	Hook     []string // the PreToolUse hook command line, split into words
	MCP      []string // the MCP server's command and arguments
	// Nauro is the "nauro" server's command and arguments (`nexus mcp
	// --only decisions`), when install registered the decision store on
	// its own; nil otherwise.
	Nauro []string
	// Env is the settings' env; MCPEnv and NauroEnv the server entries'
	// own env.
	Env, MCPEnv, NauroEnv map[string]string
}

// hostEnv is the environment Claude Code started without a shell gives
// its hooks and MCP servers: a few login variables, a system PATH, the
// settings' env.
func hostEnv(extra ...map[string]string) []string {
	var env []string
	for _, k := range []string{"HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	for _, m := range extra {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (p Probe) timeout() time.Duration {
	if p.Timeout <= 0 {
		return 10 * time.Second
	}
	return p.Timeout
}

// start looks the registered commands up (when Find is set), checks that
// the probe can run and makes its scratch project. A non-nil finding is
// the probe's whole result; otherwise the caller removes dir.
func (p *Probe) start() (dir string, env []string, stop *doctor.Finding) {
	if p.Find != nil {
		p.Registered = p.Find()
	}
	if f := p.precondition(); f != nil {
		return "", nil, f
	}
	dir, env, err := doctor.Scratch(claude.ProjectEnv)
	if err != nil {
		f := doctor.Fault(err.Error(), "check the temporary folder ($TMPDIR)")
		return "", nil, &f
	}
	return dir, env, nil
}

func (p Probe) precondition() *doctor.Finding {
	switch {
	case p.Registered != nil:
		return nil
	case p.Executable == "":
		f := doctor.Fault("cannot tell which executable this nexus is", "run nexus by its full path")
		return &f
	case p.NoCore:
		f := doctor.Warn("not run: no nexus-core distribution (see the distribution check)", "fix the distribution first")
		return &f
	}
	return nil
}

// HookCanary sends Claude Code's PreToolUse for an Edit by the lead in a
// scratch project with no tasks.json through `nexus hook`: the engine's gate
// must answer with a denial of the unplanned edit. Any other answer (none,
// an error on stderr, a crash) means hooks do not reach the engine.
type HookCanary struct{ Probe }

func (HookCanary) Name() string { return "claude-hook" }

func (c HookCanary) Run(ctx context.Context) []doctor.Finding {
	dir, env, f := c.start()
	if f != nil {
		return []doctor.Finding{*f}
	}
	defer os.RemoveAll(dir)
	payload, _ := json.Marshal(map[string]any{
		"hook_event_name": claude.PreToolUse,
		"session_id":      "nexus-doctor-canary",
		"cwd":             dir,
		"tool_name":       "Edit",
		"tool_input":      map[string]any{"file_path": filepath.Join(dir, "canary.txt"), "old_string": "a", "new_string": "b"},
	})
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cmd := c.command(ctx, dir, env, "hook", "--host", "claude", claude.PreToolUse)
	if r := c.Registered; r != nil && len(r.Hook) > 0 {
		cmd = c.registered(ctx, dir, r.Hook, hostEnv(r.Env, map[string]string{claude.ProjectEnv: dir, "NEXUS_GATE_UNPLANNED_EDIT": "deny", "NEXUS_GATE_POLICY": "fail-open"}))
	}
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	fix := "run the same event by hand to see the failure: echo '{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"x\"}}' | " + c.Executable + " hook --host claude PreToolUse; then check .nexus/state/<harness-id>/nexus.log"
	if err != nil {
		return []doctor.Finding{doctor.Fault(fmt.Sprintf("`nexus hook` failed%s: %v%s", c.how(), err, doctor.Tail(stderr.String())), c.fixFor(fix))}
	}
	// The denial must be the engine's unplanned-edit rule: a hook that
	// could not load its distribution denies every call
	// too, naming that problem instead.
	if !host.DeniedFor(stdout.Bytes(), "outside a planned task cycle") {
		got := strings.TrimSpace(stdout.String())
		if got == "" {
			got = "nothing"
		}
		return []doctor.Finding{doctor.Fault(fmt.Sprintf("a canary PreToolUse did not reach the gate%s: expected a denial of an unplanned edit, got %s%s", c.how(), doctor.Clip(got), doctor.Tail(stderr.String())), c.fixFor(fix))}
	}
	return []doctor.Finding{doctor.OK("a canary PreToolUse through `nexus hook` reached the engine and was denied as an unplanned edit (%s)%s", took.Round(time.Millisecond), c.how())}
}

// command runs this nexus in the probe's scratch project dir.
func (p Probe) command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	args = append(args, "--project", dir)
	if p.CoreDir != "" {
		args = append(args, "--core", p.CoreDir)
	}
	return doctor.InScratch(exec.CommandContext(ctx, p.Executable, args...), dir, env)
}

// registered runs a registered command line in the scratch project dir.
func (p Probe) registered(ctx context.Context, dir string, argv []string, env []string) *exec.Cmd {
	args := append(append([]string(nil), argv[1:]...), "--project", dir)
	return doctor.InScratch(exec.CommandContext(ctx, argv[0], args...), dir, env)
}

// fixFor adds, for a registered command, the usual cause of a failure
// that the shell does not show.
func (p Probe) fixFor(fix string) string {
	if p.Registered == nil {
		return fix
	}
	return "if it cannot find the nexus-core distribution, Claude Code lacks a variable your shell has: re-run `nexus install claude` with --core DIR (it records it in the commands) or set core.dir in ~/.config/nexus/config.yaml; otherwise " + fix
}

// how says how a probe ran, for its findings: the hook's command comes
// from the settings file, an MCP server's from the MCP servers file.
func (p Probe) how() string { return p.howIn(false) }

func (p Probe) howIn(mcp bool) string {
	if p.Registered == nil {
		return ""
	}
	where := p.Registered.Where
	if mcp && p.Registered.MCPWhere != "" {
		where = p.Registered.MCPWhere
	}
	return " (the command registered in " + where + ", in Claude Code's environment: its settings' env, no shell variables)"
}

// MCPInitialize starts `nexus mcp` on stdio in a scratch project, sends
// initialize and expects a result naming the server. When install
// registered the decision store as its own "nauro" server, that command is
// probed too, the same way, and its tools/list must offer check_decision:
// a nauro entry that starts but serves no tools (the plugin host missing,
// the store turned off in Claude Code's environment) is what a session
// would silently get.
type MCPInitialize struct{ Probe }

func (MCPInitialize) Name() string { return "claude-mcp" }

func (c MCPInitialize) Run(ctx context.Context) []doctor.Finding {
	dir, env, f := c.start()
	if f != nil {
		return []doctor.Finding{*f}
	}
	defer os.RemoveAll(dir)
	cmd := func(ctx context.Context) *exec.Cmd {
		if r := c.Registered; r != nil && len(r.MCP) > 0 {
			return c.registered(ctx, dir, r.MCP, hostEnv(r.Env, r.MCPEnv))
		}
		return c.command(ctx, dir, env, "mcp")
	}
	out := []doctor.Finding{c.probe(ctx, cmd, "`nexus mcp`", "", "run `"+c.Executable+" mcp` by hand and look at what it prints on stderr")}
	if r := c.Registered; r != nil && len(r.Nauro) > 0 {
		nauro := func(ctx context.Context) *exec.Cmd {
			return c.registered(ctx, dir, r.Nauro, hostEnv(r.Env, r.NauroEnv))
		}
		what := fmt.Sprintf("the %q MCP server (`%s`)", decisionsapi.ServerName, strings.Join(r.Nauro, " "))
		fix := "run `" + strings.Join(r.Nauro, " ") + "` by hand and look at what it prints on stderr: the decision store needs the plugin host nexus-plugins installed beside nexus (make install); to do without the store, set decisions.enabled: false and run `nexus install claude` again"
		out = append(out, c.probe(ctx, nauro, what, decisionsapi.ToolCheckDecision, fix))
	}
	return out
}

// probe checks one MCP server as Claude Code would start it (the shared
// judgement, mcpprobe.Check), naming the command Claude Code registered.
func (c MCPInitialize) probe(ctx context.Context, mk func(context.Context) *exec.Cmd, what, tool, fix string) doctor.Finding {
	return mcpprobe.Check(ctx, mcpprobe.Server{What: what, Cmd: mk, Want: tool, Fix: c.fixFor(fix)}, c.timeout(),
		mcpprobe.Wording{Host: "Claude Code", Fault: c.howIn(true), OK: c.howIn(true)})
}

// ClaudeCatalog checks the agents and skills `nexus install claude` wrote
// into each scope where nexus is registered (or has a record): every file
// the distribution renders to is present and current. Missing or outdated
// files are re-installed by --fix; a file someone edited is only reported.
type ClaudeCatalog struct {
	Project, Home string
	Executable    string
	// Render renders the agents and skills as install would.
	Render func() ([]install.OwnedFile, string, error)
	// Version is this nexus's version (for the record).
	Version string
	// ChosenCore: see ClaudeInstall.
	ChosenCore string
}

func (ClaudeCatalog) Name() string { return "claude-agents" }

func (c ClaudeCatalog) Run(context.Context) []doctor.Finding {
	var out []doctor.Finding
	checked := 0
	for _, o := range (ClaudeInstall{Project: c.Project, Home: c.Home, Executable: c.Executable}).scopes() {
		dir, err := ClaudeDir(o)
		if err != nil {
			continue
		}
		rec, err := ReadRecord(dir)
		if err != nil {
			out = append(out, doctor.Fault(err.Error(), "move the file aside and run `nexus install claude`"))
			continue
		}
		reg, err := Inspect(o)
		if err != nil || (rec == nil && !reg.Installed()) {
			continue
		}
		checked++
		flag := ""
		if o.Scope == ScopeUser {
			flag = " --scope user"
		}
		fix := fmt.Sprintf("run `nexus install claude%s` (it never overwrites a file you edited)", flag)
		if c.Render == nil {
			continue
		}
		files, coreVersion, err := c.Render()
		if err != nil {
			// The distribution and config checks report the cause.
			return append(out, doctor.OK("not checked: the agents and skills cannot be rendered (%v)", err))
		}
		reinstall := doctor.InstallRepair(o.Scope, func() ([]install.Change, error) {
			o.Files, o.Version, o.CoreVersion = files, c.Version, coreVersion
			o.CoreDir = registeredCore(reg, c.ChosenCore)
			return Install(o)
		})
		st, err := CheckOwned(dir, files)
		if err != nil {
			out = append(out, doctor.Fault(err.Error(), fix))
			continue
		}
		out = append(out, doctor.OwnedFindings(doctor.OwnedFiles{
			Dir: dir, States: st, Install: "nexus install claude" + flag, Reinstall: reinstall,
			Missing: func(m []string) string {
				if rec == nil {
					return fmt.Sprintf("nexus is registered in %s but its agents and skills are not installed in %s, so Claude Code cannot spawn a nexus role (\"Agent type 'architect' not found\")", reg.Settings, dir)
				}
				return fmt.Sprintf("%s lacks %s", dir, strings.Join(m, ", "))
			},
			Kind: [2]string{"role or skill", "roles or skills"},
			Current: func(n int) string {
				return fmt.Sprintf("%d agent and skill files in %s are present and current", n, dir)
			},
		})...)
	}
	if checked == 0 {
		return []doctor.Finding{doctor.OK("nexus is not registered with Claude Code; no agents or skills to check")}
	}
	return out
}
