package compose

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Stages are the stages of the build the doctor looks at, each with its
// result or why it failed, instead of stopping at the first failure: the
// doctor must still report a configuration that does not load or a
// distribution that cannot be found, which are exactly where Harness
// stops. The configuration is loaded once, with every layer that loads.
type Stages struct {
	Project string
	// Config holds what loads (the built-in defaults when nothing does),
	// never nil; its Problems say what did not.
	Config   *config.Config
	Settings Settings
	// Dist is the located distribution, DistErr why none is usable.
	Dist    vocabulary.Dist
	DistErr error
	// Layout places the state (LayoutErr: the .nexus root or the harness
	// id is unusable); Store reads it, checking against the schemas only
	// when the distribution was found.
	Layout    state.Layout
	LayoutErr error
	Store     *state.Store
	// Plugins are the plugin options of the layers that load (without the
	// built-in plugins when the configuration does not load whole).
	Plugins pluginhost.Options

	userFile string
}

// Stages runs every stage for the project's .nexus folder (nexusRoot as
// in Layout). Only a project that cannot be found stops it.
func (r *Root) Stages(nexusRoot string) (*Stages, error) {
	proj, err := r.Project()
	if err != nil {
		return nil, err
	}
	o := r.o.Config
	o.ProjectDir = proj
	cfg, err := config.Load(o)
	if cfg == nil {
		return nil, err
	}
	s := &Stages{Project: proj, Config: cfg, Settings: SettingsFrom(cfg), userFile: o.UserFile}
	if s.userFile == "" && !o.NoUserFile {
		s.userFile = config.UserFile(nil)
	}
	s.Dist, s.DistErr = locate(cfg, proj)
	s.Layout, s.LayoutErr = layout(cfg, proj, nexusRoot, r.o.Host)
	if s.LayoutErr == nil {
		s.Store = state.New(s.Layout, nil)
		if s.DistErr == nil {
			s.Store = state.New(s.Layout, schema.NewCoreSetFS(s.Dist.FS))
		}
	}
	s.Plugins = PluginOptionsOf(cfg, cfg.Err() == nil, proj, nexusRoot)
	return s, nil
}

// ConfigCheck is the doctor's configuration check: each problem, in the
// layer it is in, with what nexus does about it and the fix for its kind.
func (s *Stages) ConfigCheck() doctor.Config {
	c := doctor.Config{Files: s.Config.Files}
	for _, err := range s.Config.Problems() {
		c.Problems = append(c.Problems, doctor.ConfigProblem{What: s.layerName(err), Err: err, Effect: err.Effect, Broken: err.Broken(), Fix: configFix(err)})
	}
	return c
}

func (s *Stages) layerName(err error) string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return "the configuration"
	}
	// The error names the file (and line) itself.
	switch ce.Layer {
	case config.LayerUser:
		return "the user configuration"
	case config.LayerProject:
		return "the project configuration"
	case config.LayerEnv:
		return "the environment variable " + ce.Where
	case config.LayerFlag:
		return "the flag " + ce.Where
	}
	return "the configuration"
}

// configFix says how to fix a configuration error, by its kind.
func configFix(err error) string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return "correct the value at the place named; `nexus config keys` describes every key"
	}
	switch ce.Kind {
	case config.KindUnknownKey:
		return "rename or remove the key in that file (`nexus config keys` lists the valid keys)"
	case config.KindUntrusted:
		return "set the key in your user file (~/.config/nexus/config.yaml), a NEXUS_* variable or a flag instead: a project's file may not"
	case config.KindUnparseable:
		return "fix the file at the place named: it must be YAML, a mapping of keys (until then nexus's commands stop with exit status 3, and sessions go on without the file)"
	case config.KindUnreadable:
		return "make the file a readable regular file, or remove it (until then nexus's commands stop with exit status 3, and sessions go on without the file)"
	}
	return "correct the value at the place named; `nexus config keys` describes every key"
}

// CheckOptions say how the doctor checks.
type CheckOptions struct {
	// StaleAfter is how long a cycle may go untouched (0: the default).
	StaleAfter time.Duration
	// VerifyPlugins starts each plugin once.
	VerifyPlugins bool
	// Validate is `nexus validate`'s check of the distribution.
	Validate func(vocabulary.Dist) (*vocabulary.Report, error)
	// HostNamespaces are the harness ids nexus's hosts keep their state
	// under, with the hosts' names (the namespaces check counts them as
	// nexus's own).
	HostNamespaces map[string]string
}

// Checks are the doctor's host-neutral checks over the stages (the
// distribution, configuration, state and plugins); it is an error to call
// it when LayoutErr is set.
func (s *Stages) Checks(o CheckOptions) []doctor.Check {
	prefix := s.Settings.ToolPrefix
	return []doctor.Check{
		doctor.Distribution{Dist: s.Dist, LocateErr: s.DistErr, Validate: o.Validate},
		s.ConfigCheck(),
		doctor.Gitignore{Layout: s.Layout},
		doctor.Symlinks{Layout: s.Layout},
		doctor.StateFiles{Store: s.Store},
		doctor.Session{Layout: s.Layout, StaleAfter: o.StaleAfter, ToolRef: func(t string) string { return prefix + t }},
		doctor.Namespaces{Layout: s.Layout, Own: o.HostNamespaces},
		doctor.Locks{Layout: s.Layout},
		doctor.Plugins{Options: s.Plugins, Verify: o.VerifyPlugins},
	}
}

// HostEnv is what a host's doctor checks know (doctor.HostChecker): this
// nexus, the distribution located and what install would be asked.
func (s *Stages) HostEnv(exe, version string) doctor.HostEnv {
	home, _ := os.UserHomeDir()
	env := doctor.HostEnv{Project: s.Project, Home: home, Executable: exe, Version: version, CoreDir: s.Dist.Dir, NoCore: s.DistErr != nil}
	chosen, _ := chosenCore(s.Config, s.Dist, s.DistErr)
	env.ChosenCore = chosen
	env.Install = install.Request{Project: s.Project, Home: home, Command: exe, CoreDir: chosen, Decisions: s.Settings.Decisions}
	env.Install.Version = version
	if s.DistErr == nil {
		dist, set := s.Dist, s.Settings
		env.Install.Catalog = func(p lifecycle.HostProfile) (*catalog.Catalog, error) {
			core, err := vocabulary.LoadManifestDist(dist)
			if err != nil {
				return nil, err
			}
			return buildCatalog(core, set, p)
		}
	}
	return env
}

// buildCatalog derives the distribution's agents and skills for a host.
func buildCatalog(core *vocabulary.Core, set Settings, p lifecycle.HostProfile) (*catalog.Catalog, error) {
	c, err := catalog.Build(catalog.Options{Core: core, ToolPrefix: set.ToolPrefix, Gate: set.Gate, ToolClasses: tools.ClassesOf(tools.All())}.WithHost(p))
	if err != nil {
		return nil, fmt.Errorf("render the agents and skills: %w", err)
	}
	return c, nil
}
