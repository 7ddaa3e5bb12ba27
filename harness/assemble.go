package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/memory"
)

// Setup says how to assemble one project's harness (Assemble): the engine's
// options, and what the hooks and servers around it add.
type Setup struct {
	Engine Options
	// Host names the host adapter driving the lifecycle ("claude",
	// "neutral"; "" outside hooks).
	Host string
	// Plugins receive the events they subscribe to; PluginTool gives the
	// gate a plugin tool's classes by its served name. Both may be nil.
	Plugins    lifecycle.Plugins
	PluginTool func(name string) ([]string, bool)
	// MemoryPolicyOnNeed defers reading the distribution's memory policy
	// to the first event that needs it (hooks: most events never do).
	MemoryPolicyOnNeed bool
	// MemoryTools puts nx_memory_save and nx_memory_gc into the engine's
	// registry and runs automatic gc after task_close (servers, commands);
	// hooks only need memory's lifecycle side.
	MemoryTools bool
	// OnAutoGC receives what automatic memory gc after task_close did.
	OnAutoGC func(msg string, err error)
	// Configure adjusts the lifecycle options last (a host's own settings).
	Configure func(*lifecycle.Options)
}

// Assembled is one project's harness.
type Assembled struct {
	Engine *Engine
	// Memory is nil when memory features are off; MemoryErr says why.
	Memory    *memory.Manager
	MemoryErr error
	Lifecycle *lifecycle.Engine
}

// Assemble builds one project's harness: the engine (store and tools), its
// memory when the distribution's policy allows, and the lifecycle engine on
// top. `nexus hook`, `nexus mcp`, `nexus tags explain` and the memory
// commands all start here, so each is wired the same way.
func Assemble(s Setup) (*Assembled, error) {
	e, err := New(s.Engine)
	if err != nil {
		return nil, err
	}
	// The gate knows the registry's own tools by their declared classes;
	// the memory tools declare none and are not looked up there.
	classes := map[string][]string{}
	for _, t := range e.Tools() {
		classes[t.Name] = t.Classes
	}
	mo := memory.Options{Store: e.Store, Config: e.Config, OnAutoGC: s.OnAutoGC}
	if s.MemoryPolicyOnNeed {
		mo.PolicyFunc = e.Core.MemoryPolicy
	} else {
		mo.Policy = e.Core.MemoryPolicy()
	}
	a := &Assembled{Engine: e}
	a.Memory, a.MemoryErr = memory.New(mo)
	if a.MemoryErr != nil {
		a.Memory = nil
	} else if s.MemoryTools {
		e.AttachMemory(a.Memory)
	}
	lo := lifecycle.Options{
		Store:       e.Store,
		Core:        e.Core,
		Config:      e.Config,
		Host:        s.Host,
		Tools:       e,
		ToolClasses: classes,
		Plugins:     s.Plugins,
		PluginTool:  s.PluginTool,
	}
	if a.Memory != nil {
		lo.Memory = a.Memory
	}
	if s.Configure != nil {
		s.Configure(&lo)
	}
	a.Lifecycle = lifecycle.New(lo)
	return a, nil
}

// ErrNexusRootNotFolder is returned by NexusDir for a .nexus root that is a
// file.
var ErrNexusRootNotFolder = errors.New("the .nexus root is a file, not a folder")

// NexusDir resolves the .nexus folder: override when given (--nexus-root),
// else runtime.root (NEXUS_RUNTIME_ROOT), else "" for <project>/.nexus. A
// relative runtime.root from a config file is taken relative to the
// project; from a flag or the environment, to the working directory.
func NexusDir(cfg *config.Config, proj, override string) (string, error) {
	dir := override
	if dir == "" {
		dir = cfg.String("runtime.root")
		if dir != "" && !filepath.IsAbs(dir) {
			switch cfg.Source("runtime.root").Layer {
			case config.LayerProject, config.LayerUser:
				dir = filepath.Join(proj, dir)
			}
		}
	}
	if dir == "" {
		return "", nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolve the .nexus root: %w", err)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return "", fmt.Errorf("%w: %s", ErrNexusRootNotFolder, dir)
	}
	return dir, nil
}

// ProjectLayout is the state layout of a project as its configuration
// places it: the .nexus folder NexusDir resolves (default
// <project>/.nexus) and the configured harness.id.
func ProjectLayout(cfg *config.Config, project, nexusRoot string) (state.Layout, error) {
	dir, err := NexusDir(cfg, project, nexusRoot)
	if err != nil {
		return state.Layout{}, err
	}
	if dir == "" {
		dir = filepath.Join(project, ".nexus")
	}
	return state.NewLayoutAt(project, dir, cfg.String("harness.id"))
}

// LogWithoutEngine writes an error to nexus.log when no engine could be
// assembled (a hook whose configuration or distribution is broken), in the
// .nexus folder the engine would have used; cfg is nil when the
// configuration did not load, and the project's own .nexus is taken. A
// .nexus folder is never created just to hold the complaint.
func LogWithoutEngine(ctx context.Context, cfg *config.Config, project, event, agentID, msg string) {
	l, err := state.NewLayout(project, harnessid.Default)
	if cfg != nil {
		l, err = ProjectLayout(cfg, project, "")
	}
	if err != nil || !state.Exists(l.Nexus) {
		return
	}
	lg := &lifecycle.Logger{Store: state.New(l, nil)}
	lg.Log(ctx, "error", event, agentID, msg)
}

// GatePolicy is gate.policy (fail-open or fail-closed: whether a hook that
// fails denies the tool call). cfg is nil when the configuration did not
// load; then NEXUS_GATE_POLICY alone decides, so a hook whose
// configuration is broken still fails closed when that variable says so.
func GatePolicy(cfg *config.Config) string {
	if cfg != nil {
		return cfg.String("gate.policy")
	}
	return os.Getenv(config.EnvName("gate.policy"))
}
