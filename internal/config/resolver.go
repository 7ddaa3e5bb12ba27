package config

import (
	"errors"
	"strings"
	"sync"
)

// Resolver is the priority lookup that holds the layers and resolves every
// value: viper (*viper.Viper), registered by the blank import of
// internal/config/useviper in the programs that load configuration.
// This package does not import viper itself so that a program can use a
// configuration viper resolved without linking viper and its dependencies
// (net/http among them): the hook's program reads a resolution viper
// made earlier, from the cache (Options.Cache), and hands the invocation
// to nexus-full, which links viper, when there is none for its inputs.
type Resolver interface {
	SetDefault(key string, value any)
	MergeConfigMap(cfg map[string]any) error
	SetEnvPrefix(prefix string)
	SetEnvKeyReplacer(r *strings.Replacer)
	BindEnv(input ...string) error
	BindFlagValue(key string, flag FlagValue) error
	Set(key string, value any)
	Get(key string) any
	GetString(key string) string
	GetBool(key string) bool
	GetInt(key string) int
	GetFloat64(key string) float64
	GetStringSlice(key string) []string
}

var (
	resolverMu  sync.Mutex
	newResolver func() Resolver
)

// UseResolver registers the priority lookup every Load resolves with
// (internal/config/useviper registers viper).
func UseResolver(f func() Resolver) {
	resolverMu.Lock()
	defer resolverMu.Unlock()
	newResolver = f
}

func resolverFactory() func() Resolver {
	resolverMu.Lock()
	defer resolverMu.Unlock()
	return newResolver
}

// ErrUnresolved is Load's error in a program without the priority lookup
// (the hook's program) when no resolution of exactly these inputs is
// cached: a program that links viper (nexus-full) must load it.
var ErrUnresolved = errors.New("the configuration is not resolved for these inputs in this program (nexus-full resolves it)")

// frozen is a resolution as the getters read it: every key's effective
// value in its kind's Go type (Config.value). It is read only: a frozen
// configuration is never loaded into.
type frozen map[string]any

func (f frozen) Get(key string) any { return f[key] }
func (f frozen) GetString(key string) string {
	s, _ := f[key].(string)
	return s
}
func (f frozen) GetBool(key string) bool {
	b, _ := f[key].(bool)
	return b
}
func (f frozen) GetInt(key string) int {
	n, _ := f[key].(int)
	return n
}
func (f frozen) GetFloat64(key string) float64 {
	x, _ := f[key].(float64)
	return x
}
func (f frozen) GetStringSlice(key string) []string {
	l, _ := f[key].([]string)
	return l
}

func (frozen) SetDefault(string, any) { panic("config: a frozen configuration is read only") }
func (frozen) MergeConfigMap(map[string]any) error {
	panic("config: a frozen configuration is read only")
}
func (frozen) SetEnvPrefix(string) { panic("config: a frozen configuration is read only") }
func (frozen) SetEnvKeyReplacer(*strings.Replacer) {
	panic("config: a frozen configuration is read only")
}
func (frozen) BindEnv(...string) error { panic("config: a frozen configuration is read only") }
func (frozen) BindFlagValue(string, FlagValue) error {
	panic("config: a frozen configuration is read only")
}
func (frozen) Set(string, any) { panic("config: a frozen configuration is read only") }
