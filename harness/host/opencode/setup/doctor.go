package setup

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/doctor/mcpprobe"
	"github.com/nexus-harness/nexus/harness/host/opencode"
	installpkg "github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// nexus doctor's checks of the OpenCode setup (doctor.HostChecker): what
// install wrote in each scope (the plugin, the MCP entries), the plugin,
// agent and skill files, a canary tool call through the plugin's command
// lines (the long-lived child and the one process per hook) and an MCP
// handshake with the registered servers, both run as the plugin and
// OpenCode run them.

// DoctorChecks implements doctor.HostChecker.
func (h Host) DoctorChecks(env doctor.HostEnv) []doctor.Check {
	base := checkBase{env: env}
	return []doctor.Check{Registration{base}, Catalog{base, h}, HookCanary{base}, MCPProbe{base}}
}

type checkBase struct{ env doctor.HostEnv }

// scopeState is one scope's setup as found on disk.
type scopeState struct {
	Folders
	// cfgFile is the opencode.json nexus's entries are in (or would go).
	cfgFile      string
	nexus, nauro *Entry
	cfgErr       error
	plugin       *Installed // nil when there is none
	pluginFile   string
	pluginErr    error
	// pluginOurs is set when the record says nexus wrote the plugin as it
	// is (an install can replace it without --force).
	pluginOurs bool
	record     bool
	recordErr  error
}

// installed reports whether nexus is set up in the scope at all.
func (s scopeState) installed() bool {
	return s.plugin != nil || s.pluginErr != nil || s.nexus != nil && s.nexus.Ours || s.record
}

// nexusEntry is mcp.nexus (nil for no scope or no entry).
func (s *scopeState) nexusEntry() *Entry {
	if s == nil {
		return nil
	}
	return s.nexus
}

func (s scopeState) flag() string {
	if s.Scope == installpkg.ScopeUser {
		return " --scope user"
	}
	return ""
}

func readFile(p string, limit int64) ([]byte, bool, error) {
	a, err := installpkg.OpenAnchor(filepath.Dir(p), false)
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	return a.Read(filepath.Base(p), limit)
}

func (b checkBase) scopes() []scopeState {
	var out []scopeState
	for _, sc := range []string{installpkg.ScopeProject, installpkg.ScopeUser} {
		if sc == installpkg.ScopeProject && b.env.Project == "" || sc == installpkg.ScopeUser && b.env.Home == "" {
			continue
		}
		f, err := ScopeFolders(sc, b.env.Project, b.env.Home, b.env.Install.Getenv)
		if err != nil {
			continue
		}
		s := scopeState{Folders: f, pluginFile: filepath.Join(f.Config, filepath.FromSlash(PluginPath))}
		s.cfgFile = ConfigFile(f.ConfigFileDir, func(p string) bool {
			_, ok, _ := readFile(p, MaxConfigBytes)
			return ok
		}, func(p string) bool {
			data, _, _ := readFile(p, MaxConfigBytes)
			e, _ := ReadEntry(data, opencode.MCPServerName, b.env.Executable)
			return e != nil
		})
		if data, _, err := readFile(s.cfgFile, MaxConfigBytes); err != nil {
			s.cfgErr = err
		} else if s.nexus, err = ReadEntry(data, opencode.MCPServerName, b.env.Executable); err != nil {
			s.cfgErr = fmt.Errorf("%s cannot be read as JSON with comments (%v)", s.cfgFile, err)
		} else {
			s.nauro, _ = ReadEntry(data, opencode.NauroServerName, b.env.Executable)
		}
		rec, err := owned.ReadRecord(f.Config)
		s.record, s.recordErr = rec != nil, err
		if data, ok, err := readFile(s.pluginFile, installpkg.MaxOwnedFile); err != nil {
			s.pluginErr = err
		} else if ok {
			in, err := ReadPlugin(data)
			if err != nil {
				s.pluginErr = fmt.Errorf("%s: %v", s.pluginFile, err)
			} else {
				s.plugin = &in
			}
			sum := sha256.Sum256(data)
			s.pluginOurs = rec != nil && slices.Contains(rec.Files, installpkg.RecordEntry{Path: PluginPath, SHA256: hex.EncodeToString(sum[:])})
		}
		out = append(out, s)
	}
	return out
}

// registered is the scope whose plugin and servers the probes run: the
// project's when nexus is set up there, else the user's; nil when none.
func (b checkBase) registered() *scopeState {
	for _, s := range b.scopes() {
		if s.installed() {
			return &s
		}
	}
	return nil
}

// runs reports whether the probes may start a command the scope names: a
// project's files come with its repository, and a cloned repository can
// name any program in a plugin file or an MCP entry of nexus's shape, so
// the project scope's commands run only when they run this very
// executable (the registration check names any other). The user's own
// scope is trusted.
func (b checkBase) runs(s *scopeState, exe string) bool {
	return s.Scope == installpkg.ScopeUser || b.env.Executable != "" && doctor.SameExecutable(exe, b.env.Executable)
}

// probedPlugin is the scope's plugin when the probes may run its command
// lines: nexus's hook command (hook --host opencode) on both.
func (b checkBase) probedPlugin(s *scopeState) *Installed {
	if s == nil || s.plugin == nil || !b.runs(s, s.plugin.Nexus) {
		return nil
	}
	for _, args := range [][]string{s.plugin.ServeArgs, s.plugin.CallArgs} {
		if len(args) < len(DefaultCallArgs) || !slices.Equal(args[:len(DefaultCallArgs)], DefaultCallArgs) {
			return nil
		}
	}
	return s.plugin
}

// probedServer is an MCP entry of the scope when the probes may start it.
func (b checkBase) probedServer(s *scopeState, e *Entry) *Entry {
	if s == nil || e == nil || !e.Ours || len(e.Command) < 2 || !b.runs(s, e.Command[0]) {
		return nil
	}
	return e
}

// Registration checks what `nexus install opencode` set up: in every scope
// where nexus is, the plugin (present, speaking this nexus's protocol,
// running this nexus) and the nexus MCP server entry running this nexus;
// and that only one scope has the plugin (OpenCode loads both, so every
// hook would reach nexus twice). --fix re-runs the install for what is
// missing or points elsewhere.
type Registration struct{ checkBase }

func (Registration) Name() string { return "opencode-install" }

func (c Registration) Run(context.Context) []doctor.Finding {
	if c.env.Executable == "" {
		return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is, so its registration cannot be compared", "run nexus by its full path")}
	}
	var out []doctor.Finding
	var installed []scopeState
	for _, s := range c.scopes() {
		if s.cfgErr != nil {
			out = append(out, doctor.Fault(s.cfgErr.Error()+"; OpenCode skips a config file it cannot parse", "fix the file by hand (nexus does not rewrite a file it cannot parse)"))
		}
		if s.installed() {
			installed = append(installed, s)
		}
	}
	if len(installed) == 0 {
		if len(out) > 0 {
			return out
		}
		return []doctor.Finding{doctor.OK("nexus is not registered with OpenCode (run `nexus install opencode` to use it there)")}
	}
	plugins := 0
	for _, s := range installed {
		if s.plugin != nil {
			plugins++
		}
		out = append(out, c.check(s)...)
	}
	if plugins > 1 {
		out = append(out, doctor.Warn("the nexus plugin is installed in both the project and the user scope: OpenCode loads both, so every hook reaches nexus twice",
			"remove one: `nexus uninstall opencode --scope user` (or --scope project)"))
	}
	if doctor.AllOK(out) {
		var where []string
		for _, s := range installed {
			where = append(where, fmt.Sprintf("%s scope (%s, %s)", s.Scope, s.pluginFile, s.cfgFile))
		}
		out = append([]doctor.Finding{doctor.OK("the plugin (protocol %d) and the MCP server run this nexus (%s) in the %s", opencode.ProtocolVersion, c.env.Executable, strings.Join(where, "; "))}, out...)
	}
	return out
}

func (c Registration) check(s scopeState) []doctor.Finding {
	fix := fmt.Sprintf("run `nexus install opencode%s` with this nexus (it keeps a backup and leaves other entries alone)", s.flag())
	reinstall := doctor.Once(func(context.Context) (string, error) {
		req := c.env.Install
		req.Scope, req.Project, req.Home, req.Command = s.Scope, c.env.Project, c.env.Home, c.env.Executable
		req.Version, req.CoreDir = c.env.Version, registeredCore(s, c.env.ChosenCore)
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
	// A plugin nexus did not write as it is (edited, or someone else's) is
	// replaced only with --force: install leaves it alone.
	pluginFix, pluginRepair := fix, reinstall
	if s.plugin != nil || s.pluginErr != nil {
		if !s.pluginOurs {
			pluginFix = fmt.Sprintf("the file is not the one nexus wrote (edited, or another plugin of that name): rename your own plugin, or replace it with `nexus install opencode%s --force` (a backup is kept)", s.flag())
			pluginRepair = nil
		}
	}
	finding := func(f doctor.Finding) doctor.Finding {
		if pluginRepair != nil {
			return f.RepairedBy(pluginRepair)
		}
		return f
	}
	switch p := s.plugin; {
	case s.pluginErr != nil:
		out = append(out, finding(doctor.Fault(fmt.Sprintf("%v, so OpenCode's hooks may not reach nexus", s.pluginErr), pluginFix)))
	case p == nil:
		out = append(out, doctor.Fault(fmt.Sprintf("%s is missing, so OpenCode runs without nexus's gate, context and tracking", s.pluginFile), fix).RepairedBy(reinstall))
	case p.Protocol != opencode.ProtocolVersion:
		out = append(out, finding(doctor.Fault(fmt.Sprintf("%s speaks protocol %d and this nexus %d, so every tool call is refused", s.pluginFile, p.Protocol, opencode.ProtocolVersion), pluginFix)))
	case !doctor.SameExecutable(p.Nexus, c.env.Executable):
		f := doctor.OtherExecutable("the plugin "+s.pluginFile, "runs", p.Nexus, c.env.Executable, pluginFix, reinstall)
		if pluginRepair == nil {
			f = doctor.Finding{Status: f.Status, Message: f.Message, Fix: f.Fix}
		}
		out = append(out, f)
	}
	switch e := s.nexus; {
	case e == nil:
		out = append(out, doctor.Fault(fmt.Sprintf("%s registers no %q MCP server, so the nexus tools are missing in OpenCode", s.cfgFile, opencode.MCPServerName), fix).RepairedBy(reinstall))
	case !e.Ours:
		out = append(out, doctor.Fault(fmt.Sprintf("the MCP server %q in %s runs %s, not nexus, so the nexus tools are missing", opencode.MCPServerName, s.cfgFile, strings.Join(e.Command, " ")),
			"rename or remove that server yourself (nexus never touches another tool's entry), then run `nexus install opencode"+s.flag()+"`"))
	case !doctor.SameExecutable(e.Command[0], c.env.Executable):
		out = append(out, doctor.OtherExecutable(fmt.Sprintf("the MCP server %q in %s", opencode.MCPServerName, s.cfgFile), "runs", e.Command[0], c.env.Executable, fix, reinstall))
	}
	return out
}

// registeredCore is the --core the scope's plugin or server was installed
// with, else chosen.
func registeredCore(s scopeState, chosen string) string {
	var lists [][]string
	if s.plugin != nil {
		lists = append(lists, s.plugin.ServeArgs)
	}
	if s.nexus != nil {
		lists = append(lists, s.nexus.Command)
	}
	for _, words := range lists {
		for i := 0; i+1 < len(words); i++ {
			if words[i] == "--core" {
				return words[i+1]
			}
		}
	}
	return chosen
}

// Catalog checks the plugin, agent and skill files install wrote in each
// scope where nexus is set up: present and current (rendered again from
// the distribution in use and this nexus). Missing or outdated files are
// re-installed by --fix; a file someone edited is only reported.
type Catalog struct {
	checkBase
	host Host
}

func (Catalog) Name() string { return "opencode-agents" }

func (c Catalog) Run(context.Context) []doctor.Finding {
	var out []doctor.Finding
	checked := 0
	for _, s := range c.scopes() {
		if s.recordErr != nil {
			out = append(out, doctor.Fault(s.recordErr.Error(), "move the file aside and run `nexus install opencode"+s.flag()+"`"))
			continue
		}
		if !s.installed() {
			continue
		}
		checked++
		if c.env.Install.Catalog == nil {
			continue
		}
		req := c.env.Install
		req.Scope, req.Project, req.Home, req.Command, req.Version = s.Scope, c.env.Project, c.env.Home, c.env.Executable, c.env.Version
		req.CoreDir = registeredCore(s, c.env.ChosenCore)
		files, _, err := c.host.CatalogFiles(req, s.Folders)
		if err != nil {
			// The distribution and config checks report the cause.
			return append(out, doctor.OK("not checked: the plugin, agents and skills cannot be rendered (%v)", err))
		}
		fix := fmt.Sprintf("run `nexus install opencode%s` (it never overwrites a file you edited)", s.flag())
		reinstall := doctor.InstallRepair(s.Scope, func() ([]installpkg.Change, error) { return c.host.Install(req) })
		st, err := owned.Check(s.Config, files)
		if err != nil {
			out = append(out, doctor.Fault(err.Error(), fix))
			continue
		}
		out = append(out, doctor.OwnedFindings(doctor.OwnedFiles{
			Dir: s.Config, States: st, Install: "nexus install opencode" + s.flag(), Reinstall: reinstall,
			Missing: func(m []string) string {
				return fmt.Sprintf("%s lacks %s, so OpenCode cannot run those roles or list those skills", s.Config, strings.Join(m, ", "))
			},
			Kind: [2]string{"file", "files"},
			Current: func(n int) string {
				return fmt.Sprintf("the plugin and %d agent and skill files in %s are present and current", n-1, s.Config)
			},
		})...)
	}
	if checked == 0 {
		return []doctor.Finding{doctor.OK("nexus is not registered with OpenCode; no plugin, agents or skills to check")}
	}
	return out
}

const probeTimeout = 10 * time.Second

// canaryRequest is the plugin's request for a write by Lead in a session
// nexus has not seen, in dir (the scratch project, with no tasks.json):
// the gate must refuse it as an unplanned edit.
func canaryRequest(dir string, id uint64) []byte {
	in, _ := json.Marshal(map[string]any{"tool": opencode.ToolWrite, "sessionID": "ses_nexus_doctor_canary", "callID": "canary"})
	out, _ := json.Marshal(map[string]any{"args": map[string]any{"filePath": "canary.txt", "content": "canary\n"}})
	b, _ := opencode.EncodeRequest(opencode.Request{V: opencode.ProtocolVersion, ID: id, Hook: opencode.HookToolBefore, PID: os.Getpid(), Dir: dir, Input: in, Output: out})
	return b
}

// canaryAnswered says what is wrong with a reply to the canary ("" when it
// is the unplanned edit's refusal).
func canaryAnswered(line []byte, id uint64) string {
	var r opencode.Reply
	switch {
	case len(strings.TrimSpace(string(line))) == 0:
		return "nothing"
	case json.Unmarshal(line, &r) != nil:
		return doctor.Clip(strings.TrimSpace(string(line)))
	case r.ID != id:
		return fmt.Sprintf("a reply to request %d", r.ID)
	case r.Error != "":
		return "an error: " + r.Error
	case !strings.Contains(r.Block, "outside a planned task cycle"):
		return fmt.Sprintf("%q", doctor.Clip(r.Block))
	}
	return ""
}

// HookCanary sends the plugin's request for a write by Lead in a scratch
// project with no tasks.json through both of the plugin's command lines:
// the long-lived child (SERVE, over its standard input and output, which
// must then end with its input) and the one process per hook (ONCE). The
// gate must refuse the unplanned edit each time; any other answer means
// OpenCode's tool calls are not checked (the plugin refuses every call it
// gets no answer for). Without an installed plugin it runs this nexus's
// `nexus hook --host opencode`.
type HookCanary struct{ checkBase }

func (HookCanary) Name() string { return "opencode-hook" }

func (c HookCanary) Run(ctx context.Context) []doctor.Finding {
	if c.env.NoCore {
		return []doctor.Finding{doctor.Warn("not run: no nexus-core distribution (see the distribution check)", "fix the distribution first")}
	}
	dir, env, err := doctor.Scratch()
	if err != nil {
		return []doctor.Finding{doctor.Fault(err.Error(), "check the temporary folder ($TMPDIR)")}
	}
	defer os.RemoveAll(dir)
	var nexus, how string
	var serve, once []string
	s := c.registered()
	if p := c.probedPlugin(s); p != nil {
		nexus, serve, once = p.Nexus, p.ServeArgs, p.CallArgs
		how = " (the command lines of " + s.pluginFile + ")"
	} else {
		if c.env.Executable == "" {
			return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is", "run nexus by its full path")}
		}
		serve, once = HookArgs("", c.env.CoreDir)
		nexus = c.env.Executable
	}
	// The scratch project replaces the installed one (a later --project
	// wins).
	serve = append(slices.Clone(serve), "--project", dir)
	once = append(slices.Clone(once), "--project", dir)
	fix := "run the plugin's request by hand to see the failure: printf '%s' '" + strings.TrimSpace(string(canaryRequest("/tmp", 1))) + "' | " + installpkg.ShellQuote(nexus) + " hook --host opencode; then check .nexus/state/opencode/nexus.log"
	var out []doctor.Finding
	took, got, err := c.viaChild(ctx, dir, env, nexus, serve)
	switch {
	case err != nil:
		out = append(out, doctor.Fault(fmt.Sprintf("the plugin's long-lived `nexus hook --host opencode --serve` failed%s: %v", how, err), fix))
	case got != "":
		out = append(out, doctor.Fault(fmt.Sprintf("a canary tool call through the plugin's long-lived child did not reach the gate%s: expected a refusal of an unplanned edit, got %s", how, got), fix))
	default:
		out = append(out, doctor.OK("a canary tool call through the plugin's long-lived `nexus hook --host opencode --serve` reached the engine and was refused as an unplanned edit, and the child ended with its input (%s)%s", took.Round(time.Millisecond), how))
	}
	ctx2, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := doctor.InScratch(exec.CommandContext(ctx2, nexus, once...), dir, env)
	cmd.Stdin = strings.NewReader(string(canaryRequest(dir, 2)))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	stdout, err := cmd.Output()
	switch {
	case err != nil:
		out = append(out, doctor.Fault(fmt.Sprintf("the plugin's `nexus hook --host opencode` failed%s: %v%s", how, err, doctor.Tail(stderr.String())), fix))
	case canaryAnswered(stdout, 2) != "":
		out = append(out, doctor.Fault(fmt.Sprintf("a canary tool call through the plugin's one process per hook did not reach the gate%s: expected a refusal of an unplanned edit, got %s%s", how, canaryAnswered(stdout, 2), doctor.Tail(stderr.String())), fix))
	default:
		out = append(out, doctor.OK("a canary tool call through the plugin's one process per hook (its fallback) was refused as an unplanned edit (%s)", time.Since(start).Round(time.Millisecond)))
	}
	return out
}

// viaChild runs the long-lived child as the plugin does: one request on
// its input, its reply read, then its input closed, after which it must
// exit. It returns what was wrong with the reply ("" when nothing).
func (c HookCanary) viaChild(ctx context.Context, dir string, env []string, nexus string, args []string) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := doctor.InScratch(exec.CommandContext(ctx, nexus, args...), dir, env)
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	_, _ = in.Write(canaryRequest(dir, 1))
	line, rerr := bufio.NewReader(stdout).ReadBytes('\n')
	took := time.Since(start)
	in.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return took, "", fmt.Errorf("it did not exit within %s after its input ended%s", probeTimeout, doctor.Tail(stderr.String()))
		}
		return took, "", fmt.Errorf("%v%s", err, doctor.Tail(stderr.String()))
	}
	if rerr != nil && len(line) == 0 {
		return took, "nothing" + doctor.Tail(stderr.String()), nil
	}
	if why := canaryAnswered(line, 1); why != "" {
		return took, why + doctor.Tail(stderr.String()), nil
	}
	return took, "", nil
}

// MCPProbe starts the MCP servers install registered (nexus, and nauro
// when the decision store is served on its own) in a scratch project, with
// the environment OpenCode gives a local server (its own, plus the entry's
// environment), and runs the initialize handshake; nauro must list
// check_decision. Without a registration it probes this nexus's server.
type MCPProbe struct{ checkBase }

func (MCPProbe) Name() string { return "opencode-mcp" }

func (c MCPProbe) Run(ctx context.Context) []doctor.Finding {
	if c.env.NoCore {
		return []doctor.Finding{doctor.Warn("not run: no nexus-core distribution (see the distribution check)", "fix the distribution first")}
	}
	dir, env, err := doctor.Scratch()
	if err != nil {
		return []doctor.Finding{doctor.Fault(err.Error(), "check the temporary folder ($TMPDIR)")}
	}
	defer os.RemoveAll(dir)
	type server struct {
		what string
		argv []string
		env  map[string]string
		tool string
	}
	var servers []server
	s := c.registered()
	if e := c.probedServer(s, s.nexusEntry()); e != nil {
		servers = append(servers, server{fmt.Sprintf("the %q MCP server in %s", opencode.MCPServerName, s.cfgFile), e.Command, e.Environment, ""})
		if n := c.probedServer(s, s.nauro); n != nil {
			servers = append(servers, server{fmt.Sprintf("the %q MCP server in %s", opencode.NauroServerName, s.cfgFile), n.Command, n.Environment, decisionsapi.ToolCheckDecision})
		}
	} else if c.env.Executable != "" {
		nexusArgs, _ := ServerArgs(c.env.CoreDir, false)
		servers = append(servers, server{"`nexus mcp --host opencode`", append([]string{c.env.Executable}, nexusArgs...), nil, ""})
	} else {
		return []doctor.Finding{doctor.Fault("cannot tell which executable this nexus is", "run nexus by its full path")}
	}
	var out []doctor.Finding
	for _, sv := range servers {
		senv := append(slices.Clone(env), "OPENCODE=1")
		for k, v := range sv.env {
			senv = append(senv, k+"="+v)
		}
		mk := func(ctx context.Context) *exec.Cmd {
			return doctor.InScratch(exec.CommandContext(ctx, sv.argv[0], sv.argv[1:]...), dir, senv)
		}
		fix := "run `" + strings.Join(sv.argv, " ") + "` by hand and look at what it prints on stderr"
		if sv.tool != "" {
			fix += ": the decision store needs the plugin host nexus-plugins installed beside nexus (make install); to do without the store, set decisions.enabled: false and run `nexus install opencode` again"
		}
		out = append(out, mcpprobe.Check(ctx, mcpprobe.Server{What: sv.what, Cmd: mk, Want: sv.tool, Fix: fix}, probeTimeout, mcpprobe.Wording{Host: "OpenCode"}))
	}
	return out
}
