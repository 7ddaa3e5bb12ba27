package compose

import (
	"os"
	"path/filepath"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/vocabulary"
)

// InstallRequest is what `nexus install <host>` asks of the host's
// installer, from the configuration and the distribution: the
// distribution the registered commands must name, the bundled decision
// store's own server, the host's configured models, and the catalog to
// derive the agents and skills from (whose error, when the distribution
// cannot be loaded, install reports and uninstall notes, leaving the
// derived files alone). The caller fills in the scope, the command and the
// options. Only a configuration that does not load is an error.
func (r *Root) InstallRequest(hostName string) (install.Request, error) {
	var req install.Request
	set, err := r.Settings()
	if err != nil {
		return req, err
	}
	cfg, _ := r.Config()
	dist, distErr := r.Dist()
	coreDir, coreErr := chosenCore(cfg, dist, distErr)
	req.CoreDir = coreDir
	req.Decisions = set.Decisions
	req.Models = set.HostModels(hostName)
	req.ServerEnv = append(config.EnvNames(), decisionsapi.Env()...)
	req.Catalog = func(p lifecycle.HostProfile) (*catalog.Catalog, error) {
		if coreErr != nil {
			return nil, coreErr
		}
		core, err := r.Core()
		if err != nil {
			return nil, err
		}
		return buildCatalog(core, set, p)
	}
	return req, nil
}

// Catalog derives the distribution's agents and skills for a host's
// profile.
func (r *Root) Catalog(p lifecycle.HostProfile) (*catalog.Catalog, error) {
	set, err := r.Settings()
	if err != nil {
		return nil, err
	}
	core, err := r.Core()
	if err != nil {
		return nil, err
	}
	return buildCatalog(core, set, p)
}

// chosenCore is the distribution directory the registered commands must
// name: one chosen with --core, NEXUS_CORE_DIR or a user config file found
// through XDG_CONFIG_HOME, which a host's environment (an IDE launcher, a
// bare shell) would not have. Locations the commands find by themselves
// (the project's config, ~/.config/nexus/config.yaml, node_modules, the
// built-in distribution) give "".
func chosenCore(cfg *config.Config, dist vocabulary.Dist, distErr error) (string, error) {
	switch cfg.Source("core.dir").Layer {
	case config.LayerFlag, config.LayerEnv:
	case config.LayerUser:
		// A user file the host also reads (HOME only) needs nothing; one
		// found through XDG_CONFIG_HOME may be invisible to it.
		bare := func(k string) (string, bool) {
			if k == "HOME" {
				return os.LookupEnv(k)
			}
			return "", false
		}
		if config.UserFile(nil) == config.UserFile(bare) {
			return "", nil
		}
	default:
		return "", nil
	}
	if distErr != nil || dist.Dir == "" {
		return "", distErr
	}
	return filepath.Abs(dist.Dir)
}
