package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/tools"
)

// pluginStartSlack is added to the longest plugin start deadline to bound
// how long ServePlugins waits for the plugins: each starts under its own
// deadline, and one that misses it is left out and named, so this bound is
// only a safety net.
const pluginStartSlack = 2 * time.Second

// ServePlugins puts the tools of m's plugins into the engine's registry
// beside nexus's own, answered by the plugin: every plugin with tools
// starts first, in parallel, so the registry is complete when this
// returns. serve picks the tools to take (nil: all). A tool named like one
// of nexus's is not taken. It returns one line per tool or plugin not
// served (refused for its name, failed to start, or named like a nexus
// tool); the others are served. The caller closes m when it stops serving.
func (e *Engine) ServePlugins(ctx context.Context, m *pluginhost.Manager, serve func(pluginhost.Tool) bool) (notServed []string) {
	for _, p := range m.Problems() {
		if p.Tool != "" { // a manifest that is not loaded is Open's to log
			notServed = append(notServed, p.Error())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, m.StartBudget()+pluginStartSlack)
	defer cancel()
	list, err := m.Tools(ctx)
	if err != nil {
		// One line per plugin that did not start, naming it.
		notServed = append(notServed, strings.Split(err.Error(), "\n")...)
	}
	for _, t := range list {
		if serve != nil && !serve(t) {
			continue
		}
		if _, taken := e.Tool(t.Name); taken {
			notServed = append(notServed, fmt.Sprintf("plugin %s: tool %s: a nexus tool has that name", t.Plugin, t.Name))
			continue
		}
		e.Register(pluginTool(m, t))
	}
	return notServed
}

// pluginTool is a plugin's tool in the registry: validated against the
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
		Plugin:      t.Plugin,
		Handle: func(ctx context.Context, _ *tools.Env, args map[string]any) (*tools.Result, error) {
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
