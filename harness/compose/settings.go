package compose

import (
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/memory"
)

// Settings are the typed options of every part, read once from the
// configuration. No domain package (gate, lifecycle, memory, catalog, the
// tools) reads the configuration itself: each gets its part of these.
type Settings struct {
	// ToolPrefix is mcp.tool_prefix: the prefix of nexus's MCP tools.
	ToolPrefix string
	// Gate is the gate's part: gate.unplanned_edit and the per-role
	// additions (with the problems found reading them).
	Gate gate.Options
	// GatePolicy is gate.policy: fail-open or fail-closed.
	GatePolicy string
	// LogLevel is log.level.
	LogLevel string
	// MemoryGC and MergeThreshold are memory.gc.* and
	// memory.merge.threshold.
	MemoryGC       memory.GCPolicy
	MergeThreshold float64
	// HookServer is plugins.hook_server.
	HookServer bool
	// Decisions is decisions.enabled: the bundled decision store is
	// declared (and served).
	Decisions bool
	// cfg is what HostModels reads a host's <host>.models from.
	cfg *config.Config
}

// SettingsFrom reads the settings of every part from a configuration.
func SettingsFrom(cfg *config.Config) Settings {
	caps, w1 := gate.RoleLists(cfg.Map("gate.extra_capabilities"), "gate.extra_capabilities")
	denials, w2 := gate.RoleLists(cfg.Map("gate.extra_denials"), "gate.extra_denials")
	prefix := toolPrefix(cfg)
	return Settings{
		ToolPrefix: prefix,
		Gate: gate.Options{
			ToolPrefix:        prefix,
			UnplannedEdit:     cfg.String("gate.unplanned_edit"),
			ExtraCapabilities: caps,
			ExtraDenials:      denials,
			Warnings:          append(w1, w2...),
		},
		GatePolicy:     cfg.String("gate.policy"),
		LogLevel:       cfg.String("log.level"),
		MemoryGC:       memoryGC(cfg),
		MergeThreshold: cfg.Float("memory.merge.threshold"),
		HookServer:     cfg.Bool("plugins.hook_server"),
		Decisions:      cfg.Bool("decisions.enabled"),
		cfg:            cfg,
	}
}

// toolPrefix is mcp.tool_prefix, the prefix of nexus's MCP tools: the
// gate, the lifecycle's messages, the memory reports, the agent files and
// the plugins' reserved names all take it from here.
func toolPrefix(cfg *config.Config) string { return cfg.String("mcp.tool_prefix") }

// memoryGC reads memory.gc.* (a threshold left at its built-in default
// counts as unset).
func memoryGC(cfg *config.Config) memory.GCPolicy {
	get := func(key string) *int {
		if !cfg.IsSet(key) {
			return nil
		}
		v := cfg.Int(key)
		return &v
	}
	return memory.GCPolicy{
		Auto:                 cfg.Bool("memory.gc.auto"),
		MinDaysSinceAccess:   get("memory.gc.min_days_since_access"),
		MinCyclesSinceAccess: get("memory.gc.min_cycles_since_access"),
		MaxAccessCount:       get("memory.gc.max_access_count"),
	}
}

// HostModels is a host's model per model_tier as configured
// (<host>.models, e.g. claude.models), nil when the configuration has no
// such key for the host.
func (s Settings) HostModels(host string) map[string]any {
	key := host + ".models"
	if s.cfg == nil {
		return nil
	}
	if _, ok := config.Lookup(key); !ok {
		return nil
	}
	return s.cfg.Map(key)
}
