package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// pluginOptions are the current project's plugin manager options
// (compose.Root.PluginOptions). Nothing is read or started.
func pluginOptions(a *app) (pluginhost.Options, error) {
	r, err := a.compose()
	if err != nil {
		return pluginhost.Options{}, err
	}
	return r.PluginOptions("")
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
	cmd.AddCommand(newPluginListCmd(a), newPluginInspectCmd(a), newPluginVerifyCmd(a))
	return cmd
}

func openPlugins(a *app, stderr io.Writer) (*pluginhost.Manager, error) {
	o, err := pluginOptions(a)
	if err != nil {
		return nil, err
	}
	o.Logger = pluginhost.NopLogger{} // problems are printed by the command
	o.HostStderr = stderr
	return pluginhost.Open(o)
}

type problemJSON struct {
	Path   string `json:"path"`
	Plugin string `json:"plugin,omitempty"`
	Tool   string `json:"tool,omitempty"` // set when only this tool is refused
	Error  string `json:"error"`
}

func problemsJSON(ps []pluginhost.Problem) []problemJSON {
	out := make([]problemJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, problemJSON{p.Path, p.Plugin, p.Tool, p.Error()})
	}
	return out
}

// problemLine prints a problem: a manifest not loaded, or one tool refused
// (the plugin itself is loaded).
func problemLine(p pluginhost.Problem) string {
	if p.Tool != "" {
		return "refused: " + p.Error()
	}
	return "not loaded: " + p.Error()
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
				disabled = append(disabled, decisionsapi.Name+" (decisions.enabled is off)")
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
					where = p.Executable + " " + strings.Join(harness.BuiltinServeArgs(p.Name), " ")
					if _, err := pluginhost.DefaultHostProgram(); err != nil {
						where += " (not installed: " + err.Error() + ")"
					}
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
				fmt.Fprintln(w, problemLine(p))
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
				for _, p := range m.Refused(d.Name) {
					fmt.Fprintf(cmd.OutOrStdout(), "  refused      %v\n", p.Err)
				}
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
		fmt.Fprintf(w, "  sha256       not checked: nexus's own plugin host\n")
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
						if p.Tool == "" { // a refused tool is a note of its plugin's report
							fmt.Fprintln(w, problemLine(p))
						}
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
		fmt.Fprintf(w, "  sha256       not checked: nexus's own plugin host\n")
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
	if i := slices.Index(sdk.EventNames(), sdk.EventName(e)); i >= 0 {
		return i
	}
	return len(sdk.EventNames())
}

// stderrLogger writes the plugin log's warnings and errors to w, one line
// each: "nexus: plugins: MSG key=value ...".
type stderrLogger struct{ w io.Writer }

func (stderrLogger) Debug(string, ...interface{})            {}
func (stderrLogger) Info(string, ...interface{})             {}
func (l stderrLogger) Warn(msg string, args ...interface{})  { l.line(msg, args) }
func (l stderrLogger) Error(msg string, args ...interface{}) { l.line(msg, args) }

func (l stderrLogger) line(msg string, args []interface{}) {
	var b strings.Builder
	b.WriteString("nexus: plugins: " + msg)
	for i := 0; i+1 < len(args); i += 2 {
		fmt.Fprintf(&b, " %v=%v", args[i], args[i+1])
	}
	fmt.Fprintln(l.w, b.String())
}
