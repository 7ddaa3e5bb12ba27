package launch

import "github.com/nexus-harness/nexus/harness/pluginhost"

// The tests were written in package pluginhost; these names keep them
// readable here.
type (
	Options      = pluginhost.Options
	Manifest     = pluginhost.Manifest
	ToolDecl     = pluginhost.ToolDecl
	Subscription = pluginhost.Subscription
	Duration     = pluginhost.Duration
	DigestError  = pluginhost.DigestError
	HookServerT  = HookServer
)

const (
	ManifestFile    = pluginhost.ManifestFile
	SourceProject   = pluginhost.SourceProject
	SourceBuiltin   = pluginhost.SourceBuiltin
	StateStopped    = pluginhost.StateStopped
	StateRunning    = pluginhost.StateRunning
	StateRestarting = pluginhost.StateRestarting
	FailOpen        = pluginhost.FailOpen
	FailClosed      = pluginhost.FailClosed
)

var (
	LoadManifest      = pluginhost.LoadManifest
	FileSHA256        = pluginhost.FileSHA256
	ProjectPluginDir  = pluginhost.ProjectPluginDir
	ErrClosed         = pluginhost.ErrClosed
	ErrUnknownPlugin  = pluginhost.ErrUnknownPlugin
	ErrNoHookServer   = pluginhost.ErrNoHookServer
	DispatchViaServer = pluginhost.DispatchViaServer
)
