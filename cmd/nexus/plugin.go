package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

func init() { register(newPluginCmd) }

// decisionTools are the decision store's tools, declared here without
// asking the plugin (which a hook process must not pay for); a test checks
// them against the plugin's Info.
var decisionTools = []string{
	decisions.ToolCheckDecision, decisions.ToolProposeDecision, decisions.ToolGetDecision,
	decisions.ToolListDecisions, decisions.ToolSearchDecisions, decisions.ToolGetContext,
	decisions.ToolGetRawFile, decisions.ToolDiffSince, decisions.ToolFlagQuestion,
	decisions.ToolUpdateState, decisions.ToolListProjects,
}

// serveArgs run a built-in plugin: the nexus binary itself, re-executed.
func serveArgs(name string) []string { return []string{"plugin", "serve", name} }

// decisionsManifest declares the bundled decision store: the nexus
// executable re-run as `nexus plugin serve decisions`, its tools exposed
// under the reference's own names (check_decision, ...). The executable is
// this very program, so there is no digest to check. The store lives in
// NAURO_HOME, outside the workspace, so no capability blocks its tools.
func decisionsManifest(project string) (*pluginhost.Manifest, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("decision store plugin: locate the nexus executable: %w", err)
	}
	tools := make([]pluginhost.ToolDecl, len(decisionTools))
	for i, n := range decisionTools {
		tools[i] = pluginhost.ToolDecl{Name: n, CapabilityClasses: []string{}}
	}
	return &pluginhost.Manifest{
		Name:            decisions.Name,
		Version:         decisions.Version,
		Description:     "Nauro-compatible decision store, bundled with nexus",
		ProtocolVersion: sdk.ProtocolVersion,
		Executable:      exe,
		Args:            serveArgs(decisions.Name),
		Dir:             project,
		ProjectDir:      true,
		Env:             []string{"NAURO_HOME"},
		Tools:           tools,
		BareToolNames:   true,
		Source:          pluginhost.SourceBuiltin,
	}, nil
}

// pluginOptions are the plugin manager options of the current project,
// from configuration: plugins.paths, plugins.settings, plugins.disabled,
// the decisions.* keys for the bundled store (unless decisions.enabled is
// off), and the user's digest cache. Nothing is read or started.
func pluginOptions(a *app) (pluginhost.Options, error) {
	cfg, err := a.Config()
	if err != nil {
		return pluginhost.Options{}, err
	}
	proj, err := a.Project()
	if err != nil {
		return pluginhost.Options{}, err
	}
	o := pluginhost.Options{
		ProjectDir:  proj,
		Paths:       cfg.StringList("plugins.paths"),
		Settings:    pluginSettings(cfg),
		Disabled:    cfg.StringList("plugins.disabled"),
		DigestCache: pluginhost.DefaultDigestCache(),
	}
	if cfg.Bool("decisions.enabled") {
		man, err := decisionsManifest(proj)
		if err != nil {
			return o, err
		}
		o.Builtin = append(o.Builtin, man)
	}
	return o, nil
}

// pluginSettings turns plugins.settings (plugin → mapping) into strings,
// with the decisions.* keys as the bundled store's settings.
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
	d := out[decisions.Name]
	if d == nil {
		d = map[string]string{}
	}
	for key, setting := range map[string]string{
		"decisions.frontmatter": decisions.SettingFrontmatter,
		"decisions.nauro_home":  decisions.SettingHome,
		"decisions.store":       decisions.SettingStore,
	} {
		if v := cfg.String(key); v != "" && (cfg.IsSet(key) || d[setting] == "") {
			d[setting] = v
		}
	}
	out[decisions.Name] = d
	return out
}

// pluginLogger is the host-side plugin log of a command: warnings and
// errors on stderr (never stdout).
func pluginLogger(w io.Writer, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: level, Output: w})
}

func newPluginCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "List, inspect and verify plugins (nexus-plugin.yaml in .nexus/plugins/*/, the user's folder, or config)",
		Long: `Plugins are programs nexus starts when it needs them: they offer MCP tools (served as
<plugin>_<tool>) and receive the lifecycle events they subscribe to. nexus finds them in
<project>/.nexus/plugins/*/nexus-plugin.yaml, in $XDG_CONFIG_HOME/nexus/plugins/*/ and in the
paths listed in plugins.paths; the decision store (check_decision, ...) is built in.

See docs/plugins.md.`,
	}
	cmd.AddCommand(newPluginListCmd(a), newPluginInspectCmd(a), newPluginVerifyCmd(a), newPluginServeCmd(), newHookServerCmd(a))
	return cmd
}

func openPlugins(a *app, stderr io.Writer) (*pluginhost.Manager, error) {
	o, err := pluginOptions(a)
	if err != nil {
		return nil, err
	}
	o.Logger = pluginLogger(stderr, hclog.Off) // problems are printed by the command
	return pluginhost.Open(o)
}

type problemJSON struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func problemsJSON(ps []pluginhost.Problem) []problemJSON {
	out := make([]problemJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, problemJSON{p.Path, p.Error()})
	}
	return out
}

func newPluginListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the plugins found, where, their tools and events (starts nothing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := openPlugins(a, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			cfg, _ := a.Config()
			disabled := cfg.StringList("plugins.disabled")
			if !cfg.Bool("decisions.enabled") {
				disabled = append(disabled, decisions.Name+" (decisions.enabled is off)")
			}
			if disabled == nil {
				disabled = []string{}
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{
					"plugins": m.List(), "problems": problemsJSON(m.Problems()), "disabled": disabled,
				})
			}
			w := cmd.OutOrStdout()
			list := m.List()
			if len(list) == 0 {
				fmt.Fprintln(w, "no plugins found")
			}
			for _, p := range list {
				where := p.Manifest
				if p.Source == pluginhost.SourceBuiltin {
					where = p.Executable + " " + strings.Join(serveArgs(p.Name), " ")
				}
				fmt.Fprintf(w, "%s %s (%s) %s\n", p.Name, p.Version, p.Source, where)
				if len(p.Tools) > 0 {
					fmt.Fprintf(w, "  tools:  %s\n", strings.Join(p.Tools, ", "))
				}
				if len(p.Events) > 0 {
					fmt.Fprintf(w, "  events: %s\n", strings.Join(p.Events, ", "))
				}
			}
			for _, d := range disabled {
				fmt.Fprintf(w, "disabled: %s\n", d)
			}
			for _, p := range m.Problems() {
				fmt.Fprintf(w, "not loaded: %s\n", p.Error())
			}
			return nil
		},
	}
}

func newPluginInspectCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect NAME",
		Short: "Show one plugin's declaration and check its executable's digest (starts nothing)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openPlugins(a, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			d, err := m.Inspect(args[0])
			if err != nil {
				return unknownPlugin(m, args[0])
			}
			if a.jsonOut {
				if err := writeJSON(cmd.OutOrStdout(), d); err != nil {
					return err
				}
			} else {
				printDetail(cmd.OutOrStdout(), d)
			}
			if !d.DigestOK {
				return &exitError{Code: 1, Err: errors.New(d.DigestError), Silent: !a.jsonOut}
			}
			return nil
		},
	}
}

func unknownPlugin(m *pluginhost.Manager, name string) error {
	var names []string
	for _, p := range m.List() {
		names = append(names, p.Name)
	}
	for _, p := range m.Problems() {
		if strings.Contains(p.Error(), fmt.Sprintf("%q", name)) || strings.Contains(p.Path, string(filepath.Separator)+name+string(filepath.Separator)) {
			return &exitError{Code: 1, Err: fmt.Errorf("plugin %s is not loaded: %v", name, p.Err)}
		}
	}
	if len(names) == 0 {
		return &exitError{Code: 1, Err: fmt.Errorf("no plugin named %q: no plugins are declared (see `nexus plugin list`)", name)}
	}
	return &exitError{Code: 1, Err: fmt.Errorf("no plugin named %q; declared: %s", name, strings.Join(names, ", "))}
}

func printDetail(w io.Writer, d *pluginhost.PluginDetail) {
	man := d.Declaration
	fmt.Fprintf(w, "%s %s (%s)\n", d.Name, d.Version, d.Source)
	if man.Description != "" {
		fmt.Fprintf(w, "  description  %s\n", man.Description)
	}
	if d.Manifest != "" {
		fmt.Fprintf(w, "  manifest     %s\n", d.Manifest)
	}
	exe := d.Executable
	if len(man.Args) > 0 {
		exe += " " + strings.Join(man.Args, " ")
	}
	fmt.Fprintf(w, "  executable   %s\n", exe)
	switch {
	case man.SHA256 == "" && d.Source == pluginhost.SourceBuiltin:
		fmt.Fprintf(w, "  sha256       not checked: the nexus executable itself\n")
	case d.DigestOK:
		fmt.Fprintf(w, "  sha256       %s (matches)\n", man.SHA256)
	default:
		fmt.Fprintf(w, "  sha256       MISMATCH: %s\n", d.DigestError)
	}
	fmt.Fprintf(w, "  priority     %d\n", man.Priority)
	if man.ProjectDir {
		fmt.Fprintf(w, "  project_dir  sent\n")
	}
	if len(man.Env) > 0 {
		fmt.Fprintf(w, "  env          %s\n", strings.Join(man.Env, ", "))
	}
	for _, t := range man.Tools {
		fmt.Fprintf(w, "  tool         %s  classes: %s%s\n", man.ExposedName(t.Name), classList(t.CapabilityClasses), durationNote(time.Duration(t.Timeout)))
	}
	for _, e := range man.EventNames() {
		fmt.Fprintf(w, "  event        %s\n", subscriptionLine(e, man.Events[e]))
	}
	fmt.Fprintf(w, "  state        %s", d.State)
	if d.PID > 0 {
		fmt.Fprintf(w, " (pid %d)", d.PID)
	}
	fmt.Fprintln(w)
}

func classList(c []string) string {
	if len(c) == 0 {
		return "none"
	}
	return strings.Join(c, ", ")
}

func durationNote(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "  timeout: " + d.String()
}

func subscriptionLine(event string, s pluginhost.Subscription) string {
	line := fmt.Sprintf("%s  timeout %s, %s", event, time.Duration(s.Timeout), s.OnFailure)
	if len(s.Tools) > 0 {
		line += ", tools: " + strings.Join(s.Tools, ", ")
	}
	return line
}

func newPluginVerifyCmd(a *app) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "verify [NAME]",
		Short: "Start a plugin (or every plugin), run the handshake, and list its tools and subscriptions",
		Long: `Verify checks each plugin end to end: the executable's digest against the manifest, a fresh
process, the handshake with mutual TLS, Info and Configure, every tool's input schema, and the
differences between the manifest and what the plugin says about itself. The process is stopped
afterwards; a running nexus is not disturbed. Exit status 1 when a plugin fails.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openPlugins(a, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			stop := m.ShutdownOnSignal()
			defer stop()
			var names []string
			if len(args) == 1 {
				if _, err := m.Inspect(args[0]); err != nil {
					return unknownPlugin(m, args[0])
				}
				names = args
			} else {
				for _, p := range m.List() {
					names = append(names, p.Name)
				}
			}
			reports := []*pluginhost.VerifyReport{}
			failed := 0
			for _, n := range names {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				r, err := m.Verify(ctx, n)
				cancel()
				if err != nil {
					return err
				}
				if !r.OK {
					failed++
				}
				reports = append(reports, r)
			}
			w := cmd.OutOrStdout()
			if a.jsonOut {
				if err := writeJSON(w, map[string]any{"reports": reports, "problems": problemsJSON(m.Problems())}); err != nil {
					return err
				}
			} else {
				for _, r := range reports {
					printVerify(w, m, r)
				}
				if len(args) == 0 {
					for _, p := range m.Problems() {
						fmt.Fprintf(w, "not loaded: %s\n", p.Error())
					}
					if len(names) == 0 {
						fmt.Fprintln(w, "no plugins found")
					}
				}
			}
			if failed > 0 || (len(args) == 0 && len(m.Problems()) > 0) {
				return &exitError{Code: 1, Silent: true}
			}
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long one plugin may take to start and describe itself")
	return c
}

func printVerify(w io.Writer, m *pluginhost.Manager, r *pluginhost.VerifyReport) {
	d, _ := m.Inspect(r.Name)
	status := "ok"
	if !r.OK {
		status = "FAILED"
	}
	fmt.Fprintf(w, "%s: %s\n", r.Name, status)
	if r.Error != "" {
		fmt.Fprintf(w, "  error        %s\n", r.Error)
	}
	switch {
	case r.ExpectedSHA256 == "" && d != nil && d.Source == pluginhost.SourceBuiltin:
		fmt.Fprintf(w, "  sha256       not checked: the nexus executable itself\n")
	case r.ActualSHA256 == r.ExpectedSHA256:
		fmt.Fprintf(w, "  sha256       %s (matches)\n", r.ActualSHA256)
	case r.ActualSHA256 != "":
		fmt.Fprintf(w, "  sha256       %s; the manifest expects %s\n", r.ActualSHA256, r.ExpectedSHA256)
	}
	if !r.OK && r.Info == nil {
		return
	}
	tls := "mutual TLS"
	if !r.MTLS {
		tls = "no TLS"
	}
	fmt.Fprintf(w, "  protocol     %d, %s, started in %s\n", r.Protocol, tls, r.StartTime.Round(100*time.Microsecond))
	if r.Info != nil {
		fmt.Fprintf(w, "  info         %s %s\n", r.Info.Name, r.Info.Version)
	}
	for _, t := range r.Tools {
		desc := firstSentence(t.Spec.Description)
		fmt.Fprintf(w, "  tool         %s  classes: %s  %s\n", t.Name, classList(t.CapabilityClasses), desc)
	}
	events := make([]string, 0, len(r.Subscriptions))
	for e := range r.Subscriptions {
		events = append(events, e)
	}
	sort.Slice(events, func(i, j int) bool { return eventOrder(events[i]) < eventOrder(events[j]) })
	for _, e := range events {
		fmt.Fprintf(w, "  event        %s\n", subscriptionLine(e, r.Subscriptions[e]))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note         %s\n", n)
	}
}

// firstSentence keeps a description's first sentence (up to ". " or a
// line break).
func firstSentence(s string) string {
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

func eventOrder(e string) int {
	for i, n := range sdk.EventNames() {
		if n == e {
			return i
		}
	}
	return len(sdk.EventNames())
}

// newPluginServeCmd runs a built-in plugin: nexus re-executes itself as
// `nexus plugin serve decisions`. Run by hand it explains that it is a
// plugin and exits 1 (go-plugin's handshake cookie is missing).
func newPluginServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve NAME",
		Short:  "Run a built-in plugin (nexus starts it itself)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case decisions.Name:
				sdk.Serve(decisions.New())
				return nil
			}
			return usagef("no built-in plugin named %q (built in: %s)", args[0], decisions.Name)
		},
	}
}

// hookServerArgs start the hook server of a project.
func hookServerArgs(project string) []string {
	return []string{"plugin", "hook-server", "--project", project}
}

// newHookServerCmd runs the per-project hook server (see
// pluginhost.HookServer). The first hook process that needs a plugin
// starts it, detached; it exits after --idle without a request.
func newHookServerCmd(a *app) *cobra.Command {
	var idle time.Duration
	c := &cobra.Command{
		Use:    "hook-server",
		Short:  "Keep the project's event plugins running for hook processes (started on demand)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := pluginOptions(a)
			if err != nil {
				return err
			}
			dir, err := pluginhost.RuntimeDir(o.ProjectDir)
			if err != nil {
				return err
			}
			o.Logger = pluginLogger(cmd.ErrOrStderr(), hclog.Info)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			s := &pluginhost.HookServer{Dir: dir, Base: o, Idle: idle, Exe: pluginhost.ExeIdentity()}
			if err := s.Run(ctx); err != nil && !errors.Is(err, pluginhost.ErrHookServerRunning) {
				return err
			}
			return nil
		},
	}
	c.Flags().DurationVar(&idle, "idle", pluginhost.DefaultHookServerIdle, "exit after this long without a request")
	return c
}
