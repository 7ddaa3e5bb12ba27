package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

func init() {
	// `nexus mcp` serves every plugin tool next to the nx_* tools: the
	// built-in decision store's under their own names (check_decision,
	// ...), the others as <plugin>_<tool> (harness.Engine.ServePlugins).
	// They stop when the server does.
	registerMCPTools(func(a *app, e *harness.Engine) (func(), error) {
		o := e.PluginOptions()
		var serve func(pluginhost.Tool) bool
		switch a.mcpScope {
		case scopeWithoutDecisions:
			// The store is served by its own server: do not start it here.
			o.Builtin = slices.DeleteFunc(o.Builtin, func(m *pluginhost.Manifest) bool { return m.Name == decisionsapi.Name })
		case scopeOnlyDecisions:
			serve = func(t pluginhost.Tool) bool { return t.Plugin == decisionsapi.Name }
		}
		o.Logger = stderrLogger{os.Stderr}
		o.HostStderr = os.Stderr // the plugin host's log; never stdout
		m, err := pluginhost.Open(o)
		if err != nil {
			return nil, err
		}
		for _, line := range e.ServePlugins(context.Background(), m, serve) {
			fmt.Fprintf(os.Stderr, "nexus mcp: not served: %s\n", line)
		}
		return func() { m.Close() }, nil
	})
}
