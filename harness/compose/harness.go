package compose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// PluginMode says how a harness reaches the project's plugins.
type PluginMode int

const (
	// PluginsOff: no plugins (the commands, the conformance target).
	PluginsOff PluginMode = iota
	// PluginsForHook: each event goes to the plugins subscribed to it
	// (through the project's warm hook server, else in-process), and the
	// gate knows plugin tools by their manifests (a hook).
	PluginsForHook
	// PluginsServed: every plugin with tools starts now and its tools join
	// the engine's registry (the MCP server); Harness.Close stops them.
	PluginsServed
)

// HarnessOptions say what to build.
type HarnessOptions struct {
	// NexusRoot is the .nexus folder a command names (--nexus-root); ""
	// = as the configuration places it.
	NexusRoot string
	// Plugins is how plugins are reached.
	Plugins PluginMode
	// Builtin, with PluginsServed, keeps the built-in plugins it returns
	// true for (nil: all); Serve picks the tools to serve (nil: all).
	Builtin func(*pluginhost.Manifest) bool
	Serve   func(pluginhost.Tool) bool
	// PluginLog receives the plugin host's warnings and errors, and
	// HostStderr its process's stderr (PluginsServed; nil: discarded).
	PluginLog  pluginhost.Logger
	HostStderr io.Writer
	// MemoryTools puts nx_memory_save and nx_memory_gc into the engine's
	// registry and runs automatic gc after task_close (servers, commands);
	// a hook only needs memory's lifecycle side. The distribution's memory
	// policy is read on first need with Options.LazyCore (hooks: most
	// events never need it), else now.
	MemoryTools bool
	// OnAutoGC receives what automatic memory gc after task_close did.
	OnAutoGC func(msg string, err error)
	// Core and Schemas, when set, are used instead of the root's
	// distribution (the conformance runner shares one across cases).
	Core    *vocabulary.Core
	Schemas *schema.Set
	// HarnessID and NexusDir, when set, place the state instead of the
	// configuration (a conformance case's scratch project).
	HarnessID, NexusDir string
	// DryRun builds a harness that writes nothing (harness.Options.DryRun):
	// `nexus tags explain` runs a user message through it.
	DryRun bool
}

// Harness is one project's harness, built.
type Harness struct {
	Engine *harness.Engine
	// Memory is nil when memory features are off; MemoryErr says why.
	Memory    *memory.Manager
	MemoryErr error
	Lifecycle *lifecycle.Engine
	// Plugins is the running plugin manager (PluginsServed), and
	// NotServed names each plugin tool it could not serve and why.
	Plugins   *pluginhost.Manager
	NotServed []string
}

// Close stops what the harness started (the plugins).
func (h *Harness) Close() {
	if h.Plugins != nil {
		h.Plugins.Close()
	}
}

// Harness builds the project's harness: the engine (store and tools), its
// memory when the distribution's policy allows, the lifecycle engine for
// the root's host on top, and the plugins as the mode says.
func (r *Root) Harness(ctx context.Context, o HarnessOptions) (*Harness, error) {
	set, err := r.Settings()
	if err != nil {
		return nil, err
	}
	cfg, _ := r.Config()
	proj, _ := r.Project()
	core := o.Core
	if core == nil {
		if core, err = r.Core(); err != nil {
			return nil, err
		}
	}
	nexusDir, id := o.NexusDir, o.HarnessID
	if nexusDir == "" {
		if nexusDir, err = NexusDir(cfg, proj, o.NexusRoot); err != nil {
			return nil, err
		}
	}
	if id == "" {
		id = harnessID(cfg, r.o.Host)
	}
	e, err := harness.New(harness.Options{
		Project:   proj,
		NexusDir:  nexusDir,
		HarnessID: id,
		Core:      core,
		Schemas:   o.Schemas,
		Gate:      set.Gate,
		DryRun:    o.DryRun,
	})
	if err != nil {
		return nil, err
	}
	h := &Harness{Engine: e}
	mo := memory.Options{Store: e.Store, GC: set.MemoryGC, MergeThreshold: set.MergeThreshold, ToolPrefix: set.ToolPrefix, OnAutoGC: o.OnAutoGC}
	if r.o.LazyCore && o.Core == nil {
		mo.PolicyFunc = core.MemoryPolicy
	} else {
		mo.Policy = core.MemoryPolicy()
	}
	h.Memory, h.MemoryErr = memory.New(mo)
	if h.MemoryErr != nil {
		h.Memory = nil
	} else if o.MemoryTools {
		e.AttachMemory(h.Memory)
	}
	lo := lifecycle.Options{
		Store:        e.Store,
		Core:         core,
		ToolPrefix:   set.ToolPrefix,
		Gate:         set.Gate,
		LogLevel:     set.LogLevel,
		MemoryAutoGC: set.MemoryGC.Auto,
		Host:         r.profile(proj),
		Tools:        e,
		ToolClasses:  e.ToolClasses(),
		Config:       r.configNotice(),
	}
	if h.Memory != nil {
		lo.Memory = h.Memory
	}
	switch o.Plugins {
	case PluginsForHook:
		po := func() (pluginhost.Options, error) { return r.pluginOptions(cfg, proj, nexusDir, id), nil }
		lo.Plugins = &harness.HookPlugins{
			Options:    po,
			HookServer: func() bool { return set.HookServer },
			Spawn:      spawnHookServer,
		}
		lo.PluginTool = func(name string) ([]string, bool) {
			opts, _ := po()
			ref, ok := pluginhost.LookupTool(opts, name)
			return ref.CapabilityClasses, ok
		}
	case PluginsServed:
		if err := r.servePlugins(ctx, h, cfg, proj, nexusDir, id, o); err != nil {
			return nil, err
		}
	}
	h.Lifecycle = lifecycle.New(lo)
	return h, nil
}

// profile is the root's host's profile for a session in the project.
func (r *Root) profile(proj string) lifecycle.HostProfile {
	if r.o.Host == nil {
		return lifecycle.HostProfile{}
	}
	env := r.o.HostEnv
	if env.Project == "" {
		env.Project = proj
	}
	if env.Home == "" {
		env.Home, _ = os.UserHomeDir()
	}
	return r.o.Host.Profile(env)
}

// Profile is the root's host's profile for a session in the project (the
// zero profile without a host), for the doors that render what the host
// installs.
func (r *Root) Profile() lifecycle.HostProfile {
	proj, _ := r.Project()
	return r.profile(proj)
}

// configNotice is what a session is told of the configuration's problems:
// each on one line, and an identity that changes when a configuration file
// does (its path, size, modification time and inode) or the problems do.
func (r *Root) configNotice() lifecycle.ConfigNotice {
	probs := r.ConfigProblems()
	if len(probs) == 0 {
		return lifecycle.ConfigNotice{}
	}
	h := sha256.New()
	var n lifecycle.ConfigNotice
	for _, p := range probs {
		n.Problems = append(n.Problems, p.Text())
		fmt.Fprintf(h, "problem %s\n", p.Text())
	}
	for _, f := range r.ConfigFiles() {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(h, "file %s %d %d %v\n", f, st.Size(), st.ModTime().UnixNano(), fileID(st))
		}
	}
	n.Identity = hex.EncodeToString(h.Sum(nil))
	return n
}

// fileID is the inode of a file, where the platform has one.
func fileID(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
