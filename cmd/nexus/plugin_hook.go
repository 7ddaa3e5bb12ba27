package main

import (
	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// newHookPlugins gives a hook the project's plugins (harness.HookPlugins)
// with this command line's configuration.
func newHookPlugins(a *app) *harness.HookPlugins {
	return &harness.HookPlugins{
		Options: func() (pluginhost.Options, error) { return pluginOptions(a) },
		HookServer: func() bool {
			cfg, err := a.Config()
			return err == nil && cfg.Bool("plugins.hook_server")
		},
		Spawn: spawnHookServer,
	}
}

func spawnHookServer(hostProgram, project, dir string) error {
	return pluginhost.SpawnHookServer(hostProgram, hookServerArgs(project), dir)
}

// hookPluginTool gives the gate a plugin tool's classes by its served
// name, reading only the one manifest it belongs to (or nothing, for the
// built-in store).
func hookPluginTool(a *app) func(string) ([]string, bool) {
	return func(name string) ([]string, bool) {
		o, err := pluginOptions(a)
		if err != nil {
			return nil, false
		}
		ref, ok := pluginhost.LookupTool(o, name)
		return ref.CapabilityClasses, ok
	}
}
