package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/config"
)

// noFile is a user-file path that never exists (config.Defaults' trick):
// loading with it leaves the user layer out.
var noFile = filepath.Join(os.DevNull, "none")

// LoadConfig loads the configuration as every nexus command does; when that
// fails it retries without the layers that fail, so the doctor can still
// check everything else. err is the failure of the full load (nil when it
// loaded).
func LoadConfig(o config.Options) (cfg *config.Config, err error) {
	cfg, err = config.Load(o)
	if err == nil {
		return cfg, nil
	}
	for _, drop := range []func(*config.Options){
		func(o *config.Options) { o.ProjectDir = "" },
		func(o *config.Options) { o.UserFile = noFile },
		func(o *config.Options) { o.ProjectDir, o.UserFile = "", noFile },
		func(o *config.Options) { o.ProjectDir, o.UserFile, o.IgnoreEnv, o.Flags = "", noFile, true, nil },
	} {
		lo := o
		drop(&lo)
		if c, lerr := config.Load(lo); lerr == nil {
			return c, err
		}
	}
	return config.Defaults(), err
}

// Config checks that the configuration loads, naming the broken layer
// (file, variable or flag) and key.
type Config struct {
	Options config.Options
}

func (Config) Name() string { return "config" }

func (c Config) Run(context.Context) []Finding {
	full, err := config.Load(c.Options)
	if err == nil {
		if len(full.Files) == 0 {
			return []Finding{ok("no configuration files; built-in defaults, NEXUS_* variables and flags apply")}
		}
		return []Finding{ok("loaded %s", strings.Join(full.Files, ", "))}
	}
	// Load each layer alone so that a problem in each is named, not just
	// the first one the full load met.
	userFile := c.Options.UserFile
	if userFile == "" {
		userFile = config.UserFile(nil)
	}
	layers := []struct {
		what string
		opts config.Options
	}{
		{"the user configuration " + userFile, config.Options{UserFile: userFile, IgnoreEnv: true}},
		{"the project configuration " + filepath.Join(c.Options.ProjectDir, config.ProjectFile), config.Options{ProjectDir: c.Options.ProjectDir, UserFile: noFile, IgnoreEnv: true}},
		{"the NEXUS_* environment variables and flags", config.Options{UserFile: noFile, IgnoreEnv: c.Options.IgnoreEnv, Flags: c.Options.Flags, FlagKeys: c.Options.FlagKeys}},
	}
	var out []Finding
	for _, l := range layers {
		if l.opts.ProjectDir == "" && strings.HasPrefix(l.what, "the project") {
			continue
		}
		if _, lerr := config.Load(l.opts); lerr != nil {
			out = append(out, fault(fmt.Sprintf("%s does not load: %v", l.what, lerr), configFix(lerr)))
		}
	}
	if len(out) == 0 {
		// Each layer is fine alone; together they are not.
		out = append(out, fault(fmt.Sprintf("the configuration does not load: %v", err), configFix(err)))
	}
	return out
}

func configFix(err error) string {
	if strings.Contains(err.Error(), "unknown configuration key") {
		return "rename or remove the key in that file (`nexus config keys` lists the valid keys); nexus commands refuse to run until it is fixed"
	}
	return "correct the value at the place named; `nexus config keys` describes every key"
}
