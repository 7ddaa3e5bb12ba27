// Package config loads nexus's layered configuration with viper, lowest to
// highest: built-in defaults < user file < project file < NEXUS_* environment
// < command-line flags. Every effective value remembers the layer (and file,
// variable or flag) it came from, for `nexus config show`.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/yamljson"
)

// Layer names, lowest precedence first.
const (
	LayerDefault = "default"
	LayerUser    = "user"
	LayerProject = "project"
	LayerEnv     = "env"
	LayerFlag    = "flag"
)

// ProjectFile is the project configuration file, relative to the project root.
const ProjectFile = ".nexus/nexus.yaml"

// EnvPrefix prefixes every environment variable nexus reads.
const EnvPrefix = "NEXUS_"

// Options says where the layers come from. Zero values mean the real
// environment.
type Options struct {
	// ProjectDir is the project root; its .nexus/nexus.yaml is the project layer.
	ProjectDir string
	// UserFile overrides the user file location.
	UserFile string
	// LookupEnv overrides os.LookupEnv (tests).
	LookupEnv func(string) (string, bool)
	// Flags are bound to keys: FlagKeys maps a key name to a flag name in Flags.
	Flags    *pflag.FlagSet
	FlagKeys map[string]string
}

// Source says where an effective value came from.
type Source struct {
	Layer  string `json:"layer"`
	Detail string `json:"detail,omitempty"` // file path, variable or flag name
}

func (s Source) String() string {
	if s.Detail == "" {
		return s.Layer
	}
	return s.Layer + " (" + s.Detail + ")"
}

// Config is the effective configuration.
type Config struct {
	v       *viper.Viper
	sources map[string]Source
	// Files lists the config files that were read, lowest layer first.
	Files []string
}

// Error is a configuration problem in a file or variable.
type Error struct {
	Where string // "file:line:col", "NEXUS_X" or "--flag"
	Key   string
	Msg   string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.Where, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Where, e.Key, e.Msg)
}

// UserFile returns the user configuration file path:
// $XDG_CONFIG_HOME/nexus/config.yaml, else ~/.config/nexus/config.yaml.
func UserFile(lookup func(string) (string, bool)) string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if x, ok := lookup("XDG_CONFIG_HOME"); ok && x != "" {
		return filepath.Join(x, "nexus", "config.yaml")
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = h
	}
	return filepath.Join(home, ".config", "nexus", "config.yaml")
}

// UserDir returns the user's nexus configuration folder.
func UserDir(lookup func(string) (string, bool)) string {
	f := UserFile(lookup)
	if f == "" {
		return ""
	}
	return filepath.Dir(f)
}

// Load builds the effective configuration.
func Load(opts Options) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	c := &Config{v: viper.New(), sources: map[string]Source{}}
	for _, k := range Keys {
		c.v.SetDefault(k.Name, k.Default)
		c.sources[k.Name] = Source{Layer: LayerDefault}
	}

	userFile := opts.UserFile
	if userFile == "" {
		userFile = UserFile(lookup)
	}
	if err := c.mergeFile(userFile, LayerUser); err != nil {
		return nil, err
	}
	if opts.ProjectDir != "" {
		if err := c.mergeFile(filepath.Join(opts.ProjectDir, ProjectFile), LayerProject); err != nil {
			return nil, err
		}
	}

	for _, k := range Keys {
		if k.Kind == Map {
			continue
		}
		name := EnvName(k.Name)
		val, ok := lookup(name)
		if !ok || val == "" {
			continue // an empty variable does not override (viper's rule too)
		}
		parsed, err := parseText(&k, val)
		if err != nil {
			return nil, &Error{Where: name, Key: k.Name, Msg: err.Error()}
		}
		c.v.Set(k.Name, parsed)
		c.sources[k.Name] = Source{Layer: LayerEnv, Detail: name}
	}

	if opts.Flags != nil {
		for key, flag := range opts.FlagKeys {
			f := opts.Flags.Lookup(flag)
			if f == nil || !f.Changed {
				continue
			}
			k, ok := Lookup(key)
			if !ok {
				return nil, fmt.Errorf("flag --%s is bound to unknown key %s", flag, key)
			}
			parsed, err := parseText(k, f.Value.String())
			if err != nil {
				return nil, &Error{Where: "--" + flag, Key: key, Msg: err.Error()}
			}
			c.v.Set(key, parsed)
			c.sources[key] = Source{Layer: LayerFlag, Detail: "--" + flag}
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// EnvName is the environment variable for a key: core.dir → NEXUS_CORE_DIR.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// mergeFile reads one YAML layer. A missing file is not an error.
func (c *Config) mergeFile(path, layer string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		// ENOTDIR: a parent is a file (Defaults reads os.DevNull+"/none").
		if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("read config %s: %w", path, err)
	}
	doc, err := yamljson.Decode(data)
	if err != nil {
		return &Error{Where: path, Msg: "invalid YAML: " + err.Error()}
	}
	if doc.Value == nil {
		c.Files = append(c.Files, path)
		return nil
	}
	root, ok := doc.Value.(map[string]any)
	if !ok {
		return &Error{Where: path + ":1:1", Msg: "the config file must be a mapping of keys"}
	}
	flat := map[string]any{}
	if err := flatten(path, doc, root, "", "", flat); err != nil {
		return err
	}
	keys := make([]string, 0, len(flat))
	for key := range flat {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if msg := checkTrust(layer, key, flat[key]); msg != "" {
			pos := doc.PosOf("/" + strings.ReplaceAll(key, ".", "/"))
			return &Error{Where: fmt.Sprintf("%s:%d:%d", path, pos.Line, pos.Col), Key: key, Msg: msg}
		}
	}
	for key, val := range flat {
		c.v.Set(key, mergeValue(c.v.Get(key), val))
		c.sources[key] = Source{Layer: layer, Detail: path}
	}
	c.Files = append(c.Files, path)
	return nil
}

// mergeValue deep-merges mappings (a project file adds to the user file's
// per-agent entries) and lets anything else replace.
func mergeValue(old, val any) any {
	om, ok1 := old.(map[string]any)
	nm, ok2 := val.(map[string]any)
	if !ok1 || !ok2 {
		return val
	}
	out := make(map[string]any, len(om)+len(nm))
	for k, v := range om {
		out[k] = v
	}
	for k, v := range nm {
		out[k] = mergeValue(out[k], v)
	}
	return out
}

func flatten(file string, doc *yamljson.Doc, m map[string]any, prefix, ptr string, out map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		p := ptr + "/" + k
		pos := doc.PosOf(p)
		where := fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Col)
		if def, ok := Lookup(name); ok {
			v, err := checkKind(def, m[k])
			if err != nil {
				return &Error{Where: where, Key: name, Msg: err.Error()}
			}
			out[name] = v
			continue
		}
		if sub, ok := m[k].(map[string]any); ok && hasPrefix(name+".") {
			if err := flatten(file, doc, sub, name, p, out); err != nil {
				return err
			}
			continue
		}
		msg := "unknown configuration key"
		if s := suggest(name); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; `nexus config keys` lists the valid keys"
		return &Error{Where: where, Key: name, Msg: msg}
	}
	return nil
}

func hasPrefix(p string) bool {
	for _, k := range Keys {
		if strings.HasPrefix(k.Name, p) {
			return true
		}
	}
	return false
}

// suggest returns the known key closest to name, if it is close enough to
// be a typo.
func suggest(name string) string {
	best, bestD := "", 4
	for _, k := range Keys {
		if d := distance(name, k.Name); d < bestD {
			best, bestD = k.Name, d
		}
	}
	return best
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func checkKind(k *Key, v any) (any, error) {
	switch k.Kind {
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
		if v == nil {
			return "", nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Int:
		switch n := v.(type) {
		case int64:
			return int(n), nil
		case float64:
			if n == float64(int(n)) {
				return int(n), nil
			}
		}
	case Float:
		switch n := v.(type) {
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
	case StringList:
		if l, ok := v.([]any); ok {
			out := make([]string, 0, len(l))
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("expected a list of strings, found an item of type %T", e)
				}
				out = append(out, s)
			}
			return out, nil
		}
	case Map:
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
		if v == nil {
			return map[string]any{}, nil
		}
	}
	return nil, fmt.Errorf("expected a %s, found %s", k.Kind, describe(v))
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return fmt.Sprintf("the string %q", v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("%v", v)
	}
}

func parseText(k *Key, s string) (any, error) {
	switch k.Kind {
	case String:
		return s, nil
	case Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("expected true or false, found %q", s)
		}
		return b, nil
	case Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("expected an integer, found %q", s)
		}
		return n, nil
	case Float:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("expected a number, found %q", s)
		}
		return f, nil
	case StringList:
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot be set from text")
}

func (c *Config) validate() error {
	if c.Bool("memory.gc.auto") {
		var missing []string
		for _, k := range []string{"memory.gc.min_days_since_access", "memory.gc.min_cycles_since_access", "memory.gc.max_access_count"} {
			if c.sources[k].Layer == LayerDefault {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			src := c.sources["memory.gc.auto"]
			return &Error{Where: src.String(), Key: "memory.gc.auto",
				Msg: fmt.Sprintf("automatic memory deletion needs all three signal thresholds; set %s (or turn memory.gc.auto off)", strings.Join(missing, ", "))}
		}
	}
	for key, allowed := range map[string][]string{
		"gate.policy":           {"fail-open", "fail-closed"},
		"gate.unplanned_edit":   {"deny", "warn", "off"},
		"decisions.frontmatter": {"documented", "reference"},
		"log.level":             {"debug", "info", "warn", "error"},
	} {
		v := c.String(key)
		ok := false
		for _, a := range allowed {
			ok = ok || v == a
		}
		if !ok {
			return &Error{Where: c.sources[key].String(), Key: key, Msg: fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", "))}
		}
	}
	if id := c.String("harness.id"); !harnessid.Valid(id) {
		return &Error{Where: c.sources["harness.id"].String(), Key: "harness.id", Msg: fmt.Sprintf("%q must match ^[a-z][a-z0-9-]*$", id)}
	}
	return nil
}

// String returns a string value.
func (c *Config) String(key string) string { return c.v.GetString(key) }

// Bool returns a boolean value.
func (c *Config) Bool(key string) bool { return c.v.GetBool(key) }

// Int returns an integer value.
func (c *Config) Int(key string) int { return c.v.GetInt(key) }

// Float returns a number.
func (c *Config) Float(key string) float64 { return c.v.GetFloat64(key) }

// StringList returns a list of strings.
func (c *Config) StringList(key string) []string { return c.v.GetStringSlice(key) }

// Map returns a mapping value (nil when unset).
func (c *Config) Map(key string) map[string]any {
	if m, ok := c.v.Get(key).(map[string]any); ok {
		return m
	}
	return c.v.GetStringMap(key)
}

// IsSet reports whether a key was set by any layer above the defaults.
func (c *Config) IsSet(key string) bool { return c.sources[key].Layer != LayerDefault }

// Source returns where a key's effective value came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

// Entry is one effective key.
type Entry struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source Source `json:"source"`
}

// All returns every key with its effective value and source, sorted by key.
func (c *Config) All() []Entry {
	out := make([]Entry, 0, len(Keys))
	for _, k := range Keys {
		out = append(out, Entry{Key: k.Name, Value: c.v.Get(k.Name), Source: c.sources[k.Name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Defaults returns the built-in defaults only (no files, no environment):
// for tests and for embedding nexus as a library.
func Defaults() *Config {
	c, err := Load(Options{UserFile: os.DevNull + "/none", LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		panic("config: built-in defaults are invalid: " + err.Error())
	}
	return c
}
