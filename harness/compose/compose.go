// Package compose is nexus's composition root: the one place that builds a
// project's harness from its parts, in order — configuration →
// distribution → state layout → store → engine → memory → lifecycle →
// plugins — with the host and the plugin mode chosen by typed options.
// Every door starts here: the hook, the MCP server, the doctor (through
// Stages, which reports each stage's result or error instead of stopping),
// the in-process conformance target, tags explain, the memory, decision,
// state and plugin commands, install and the status line. It is also the
// one package that reads the configuration for the others: each part gets
// its typed options from Settings, built once per process.
package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Options say where a Root finds what it builds from.
type Options struct {
	// Project is the project root; "" = the project WorkDir belongs to
	// (harness.FindProject).
	Project string
	// WorkDir is the working directory ("" = the process's).
	WorkDir string
	// Config says where the configuration's layers come from; its
	// ProjectDir is the project.
	Config config.Options
	// BuiltinConfig uses the built-in configuration and the project's file
	// only: no user file, no NEXUS_* variables, no flags (an in-process
	// conformance case, which the developer's settings must not change).
	BuiltinConfig bool
	// LazyCore defers decoding the distribution's manifest to the first
	// question an event asks it (hooks; see vocabulary.OpenManifest).
	LazyCore bool
	// Host is the host the door serves (nil: none, as for the MCP server
	// and the commands); it decides the default harness id and the
	// lifecycle's profile.
	Host host.Host
	// HostEnv is where the host's session runs (Project and Home are
	// filled in when empty); Getenv nil = os.Getenv.
	HostEnv host.Env
	// KeepGoing goes on without a configuration file that cannot be read
	// or parsed (the host's doors: a hook, the MCP server, the status
	// line, which must never switch nexus off and show the problem
	// instead); without it such a file is Config's error, and the command
	// stops (exit 3). A problem in one key never stops anything: the key
	// keeps its default (config.Load).
	KeepGoing bool
	// Warn, when set, receives each configuration problem that does not
	// stop the command, once, when the configuration is loaded (a
	// command prints them on stderr).
	Warn func(*config.Error)
}

// Root builds one project's parts on demand, each once.
type Root struct {
	o Options

	projOnce sync.Once
	project  string
	projErr  error

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error
	set     Settings
	// loaded is the configuration of what loads, even when cfgErr stops
	// the command (Loaded).
	loaded *config.Config

	distOnce sync.Once
	dist     vocabulary.Dist
	distErr  error

	coreOnce sync.Once
	core     *vocabulary.Core
	coreErr  error
}

// New returns a Root; nothing is read until a part is asked for.
func New(o Options) *Root {
	if o.HostEnv.Getenv == nil {
		o.HostEnv.Getenv = os.Getenv
	}
	if o.BuiltinConfig {
		o.Config = config.Options{NoUserFile: true, IgnoreEnv: true}
	}
	return &Root{o: o}
}

// Host is the host the root serves (nil: none).
func (r *Root) Host() host.Host { return r.o.Host }

// Project returns the project root.
func (r *Root) Project() (string, error) {
	r.projOnce.Do(func() {
		if r.o.Project != "" {
			r.project = r.o.Project
			return
		}
		wd := r.o.WorkDir
		if wd == "" {
			var err error
			if wd, err = os.Getwd(); err != nil {
				r.projErr = fmt.Errorf("working directory: %w", err)
				return
			}
		}
		r.project = harness.FindProject(wd)
	})
	return r.project, r.projErr
}

// Config returns the layered configuration (loaded once). A problem in a
// key is a warning (Options.Warn, ConfigProblems): the key keeps its
// default. A file that cannot be read or parsed is the error (the broken
// *config.Error values, joined), unless Options.KeepGoing: then the
// configuration of the other layers is returned.
func (r *Root) Config() (*config.Config, error) {
	r.cfgOnce.Do(func() {
		proj, err := r.Project()
		if err != nil {
			r.cfgErr = err
			return
		}
		o := r.o.Config
		o.ProjectDir = proj
		cfg, err := config.Load(o)
		if cfg == nil {
			r.cfgErr = err // a flag bound wrongly: nexus's own bug
			return
		}
		r.loaded = cfg
		if err := cfg.Err(); err != nil && !r.o.KeepGoing {
			r.cfgErr = err
		}
		if r.o.Warn != nil {
			for _, p := range cfg.Problems() {
				if !p.Broken() || r.o.KeepGoing {
					r.o.Warn(p)
				}
			}
		}
		if r.cfgErr == nil {
			r.cfg = cfg
			r.set = SettingsFrom(cfg)
		}
	})
	return r.cfg, r.cfgErr
}

// ConfigProblems are the problems met loading the configuration (nil
// before it is loaded, or when it did not load).
func (r *Root) ConfigProblems() []*config.Error {
	if r.loaded == nil {
		return nil
	}
	return r.loaded.Problems()
}

// Loaded is the configuration of every layer that loads, also when Config
// stops on a broken file (nexus version and config show still report what
// they can); nil when nothing was loaded.
func (r *Root) Loaded() *config.Config {
	_, _ = r.Config()
	return r.loaded
}

// ConfigFiles are the configuration files the root reads: the user's
// (unless left out) and the project's.
func (r *Root) ConfigFiles() []string {
	var files []string
	if !r.o.Config.NoUserFile {
		u := r.o.Config.UserFile
		if u == "" {
			u = config.UserFile(nil)
		}
		files = append(files, u)
	}
	if proj, err := r.Project(); err == nil {
		files = append(files, filepath.Join(proj, config.ProjectFile))
	}
	return files
}

// Settings returns the typed options of every part (read once).
func (r *Root) Settings() (Settings, error) {
	if _, err := r.Config(); err != nil {
		return Settings{}, err
	}
	return r.set, nil
}

// Dist locates the nexus-core distribution: --core, NEXUS_CORE_DIR,
// core.dir, node_modules, then the copy built into nexus.
func (r *Root) Dist() (vocabulary.Dist, error) {
	r.distOnce.Do(func() {
		cfg, err := r.Config()
		if err != nil {
			r.distErr = err
			return
		}
		proj, _ := r.Project()
		r.dist, r.distErr = locate(cfg, proj)
	})
	return r.dist, r.distErr
}

func locate(cfg *config.Config, proj string) (vocabulary.Dist, error) {
	return vocabulary.Locate(cfg.String("core.dir"), DescribeSource("core.dir", cfg.Source("core.dir")), proj)
}

// DescribeSource says where a key's value came from, for messages.
func DescribeSource(key string, s config.Source) string {
	switch s.Layer {
	case config.LayerFlag, config.LayerEnv:
		return s.Detail
	default:
		return fmt.Sprintf("config %s in %s", key, s.Detail)
	}
}

// Core loads the distribution's manifest (opened lazily with LazyCore:
// decoded when an event first asks it a question).
func (r *Root) Core() (*vocabulary.Core, error) {
	r.coreOnce.Do(func() {
		d, err := r.Dist()
		if err != nil {
			r.coreErr = err
			return
		}
		if r.o.LazyCore {
			r.core, r.coreErr = vocabulary.OpenManifestDist(d)
		} else {
			r.core, r.coreErr = vocabulary.LoadManifestDist(d)
		}
	})
	return r.core, r.coreErr
}

// HarnessID is the harness id the state lives under: harness.id when the
// configuration sets it, else the host's own, else the default.
func (r *Root) HarnessID() (string, error) {
	cfg, err := r.Config()
	if err != nil {
		return "", err
	}
	return harnessID(cfg, r.o.Host), nil
}

func harnessID(cfg *config.Config, h host.Host) string {
	if !cfg.IsSet("harness.id") && h != nil {
		if id := h.HarnessID(); id != "" {
			return id
		}
	}
	return cfg.String("harness.id")
}

// ErrNexusRootNotFolder is returned for a .nexus root that is a file.
var ErrNexusRootNotFolder = errors.New("the .nexus root is a file, not a folder")

// NexusDir resolves the .nexus folder: nexusRoot when given (--nexus-root),
// else runtime.root (NEXUS_RUNTIME_ROOT), else <project>/.nexus. A relative
// runtime.root from a config file is taken relative to the project; from a
// flag or the environment, to the working directory.
func NexusDir(cfg *config.Config, proj, nexusRoot string) (string, error) {
	dir := nexusRoot
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
		return filepath.Join(proj, ".nexus"), nil
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

// Layout is the project's state layout as its configuration places it:
// the .nexus folder NexusDir resolves and the harness id.
func (r *Root) Layout(nexusRoot string) (state.Layout, error) {
	cfg, err := r.Config()
	if err != nil {
		return state.Layout{}, err
	}
	proj, _ := r.Project()
	return layout(cfg, proj, nexusRoot, r.o.Host)
}

func layout(cfg *config.Config, proj, nexusRoot string, h host.Host) (state.Layout, error) {
	dir, err := NexusDir(cfg, proj, nexusRoot)
	if err != nil {
		return state.Layout{}, err
	}
	return state.NewLayoutAt(proj, dir, harnessID(cfg, h))
}

// GatePolicy is gate.policy: whether a hook that fails denies the tool
// call. When the configuration does not load, NEXUS_GATE_POLICY alone
// decides, so a hook whose configuration is broken still fails closed when
// that variable says so.
func (r *Root) GatePolicy() string {
	if s, err := r.Settings(); err == nil {
		return s.GatePolicy
	}
	return os.Getenv(config.EnvName("gate.policy"))
}

// LogWithoutEngine writes an error to nexus.log when no engine could be
// built (a hook whose distribution is broken), in the
// .nexus folder the engine would have used; without a configuration, the
// project's own .nexus. A .nexus folder is never created just to hold the
// complaint.
func (r *Root) LogWithoutEngine(ctx context.Context, event, agentID, msg string) {
	proj, err := r.Project()
	if err != nil {
		return
	}
	l, err := state.NewLayout(proj, harnessid.Default)
	if cfg, cerr := r.Config(); cerr == nil {
		l, err = layout(cfg, proj, "", r.o.Host)
	}
	if err != nil || !state.Exists(l.Nexus) {
		return
	}
	lg := &lifecycle.Logger{Store: state.New(l, nil)}
	lg.Log(ctx, "error", event, agentID, msg)
}

// HookProject is the project a hook event belongs to when the command line
// names none: the one the host names (host.Host.ProjectDir), else the
// project of the event's working directory (harness.EventProject), else ""
// (the working directory decides, as for every command).
func HookProject(h host.Host, getenv func(string) string, eventDir string) string {
	if h != nil {
		if getenv == nil {
			getenv = os.Getenv
		}
		if p := h.ProjectDir(getenv); p != "" {
			return p
		}
	}
	return harness.EventProject(eventDir)
}
