package config

import "github.com/spf13/viper"

// The package's own tests load with viper, as nexus-full does
// (internal/config/useviper, which this package cannot import here).
func init() { UseResolver(func() Resolver { return viper.New() }) }
