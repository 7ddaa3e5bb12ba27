package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/tools"
)

// mcpPluginSlack is added to the longest plugin start deadline to bound
// how long `nexus mcp` waits for its plugins: each plugin starts under its
// own deadline, and one that misses it is left out and named, so this
// bound is only a safety net.
const mcpPluginSlack = 2 * time.Second

func init() {
	// `nexus mcp` serves every plugin tool next to the nx_* tools: the
	// built-in decision store's under their own names (check_decision,
	// ...), the others as <plugin>_<tool>. All plugins with tools start in
	// parallel before the first answer, so tools/list is complete; they
	// stop when the server does.
	registerMCPTools(func(a *app, e *harness.Engine) (func(), error) {
		// Plugin data goes under the .nexus folder this server serves
		// (--nexus-root, runtime.root), like its state.
		o := e.PluginOptions()
		if a.mcpScope == scopeWithoutDecisions {
			// The store is served by its own server: do not start it here.
			o.Builtin = slices.DeleteFunc(o.Builtin, func(m *pluginhost.Manifest) bool { return m.Name == harness.DecisionsName })
		}
		o.Logger = stderrLogger{os.Stderr}
		o.HostStderr = os.Stderr // the plugin host's log; never stdout
		m, err := pluginhost.Open(o)
		if err != nil {
			return nil, err
		}
		for _, p := range m.Problems() {
			if p.Tool != "" { // refused for its name; not-loaded manifests are logged by Open
				fmt.Fprintf(os.Stderr, "nexus mcp: not served: %v\n", p.Err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.StartBudget()+mcpPluginSlack)
		defer cancel()
		list, err := m.Tools(ctx)
		if err != nil {
			// One line per plugin that did not start, naming it; the
			// others are served.
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(os.Stderr, "nexus mcp: not served: %s\n", line)
			}
		}
		for _, t := range list {
			if a.mcpScope == scopeOnlyDecisions && t.Plugin != harness.DecisionsName {
				continue
			}
			if _, taken := e.Tool(t.Name); taken {
				fmt.Fprintf(os.Stderr, "nexus mcp: plugin tool %s is not served: a nexus tool has that name\n", t.Name)
				continue
			}
			e.Register(pluginTool(m, t))
		}
		return func() { m.Close() }, nil
	})
}

// pluginTool is a plugin's tool in nexus's registry: validated against the
// plugin's schema and gated by its manifest's classes like nexus's own,
// answered by the plugin.
func pluginTool(m *pluginhost.Manager, t pluginhost.Tool) *tools.Tool {
	a := t.Spec.Annotations
	name := t.Name
	return &tools.Tool{
		Name:        name,
		Description: t.Spec.Description,
		Params:      t.Spec.InputSchema,
		Annotations: tools.Annotations{Title: a.Title, ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld},
		Classes:     t.CapabilityClasses,
		Unprefixed:  true,
		Call: func(ctx context.Context, args map[string]any) (*tools.Result, error) {
			if args == nil {
				args = map[string]any{}
			}
			in, err := json.Marshal(args)
			if err != nil {
				return nil, fmt.Errorf("encode the arguments: %w", err)
			}
			res, err := m.CallTool(ctx, name, in)
			if err != nil {
				return nil, err
			}
			return &tools.Result{Text: res.Text, Structured: res.Structured, IsError: res.IsError}, nil
		},
	}
}
