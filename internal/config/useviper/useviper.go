// Package useviper makes viper the priority lookup of
// internal/config: a program that loads configuration imports it for its
// side effect (cmd/nexus-full, cmd/nexus-plugins, internal/testenv).
// cmd/nexus, the hook's program, does not: it reads the resolutions viper
// made in such a program (config.Options.Cache), so that a hook process
// neither links nor initialises viper and its dependencies (net/http,
// crypto/tls, a TOML and a dotenv parser among them).
package useviper

import (
	"github.com/spf13/viper"

	"github.com/nexus-harness/nexus/internal/config"
)

func init() {
	config.UseResolver(func() config.Resolver { return resolver{viper.New()} })
}

// resolver is viper with its flag binding taking config's FlagValue (the
// same methods as viper's, so that config need not import viper or pflag).
type resolver struct{ *viper.Viper }

func (r resolver) BindFlagValue(key string, f config.FlagValue) error {
	return r.Viper.BindFlagValue(key, f)
}
