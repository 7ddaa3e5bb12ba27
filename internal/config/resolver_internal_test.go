package config

import "github.com/spf13/viper"

// The package's own tests load with viper, as nexus-full does
// (internal/config/useviper, which this package cannot import here).
func init() { UseResolver(func() Resolver { return testViper{viper.New()} }) }

type testViper struct{ *viper.Viper }

func (v testViper) BindFlagValue(key string, f FlagValue) error { return v.Viper.BindFlagValue(key, f) }
