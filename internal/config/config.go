// Package config loads nexus's layered configuration with viper, lowest to
// highest: built-in defaults < user file < project file < NEXUS_* environment
// < command-line flags. Every effective value remembers the layer (and file,
// variable or flag) it came from, for `nexus config show`.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/safefile"
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
	// NoUserFile leaves the user file out (Defaults, tests, the probes the
	// doctor runs in a scratch project).
	NoUserFile bool
	// IgnoreEnv leaves the NEXUS_* environment layer out (Defaults loads
	// none).
	IgnoreEnv bool
	// Flags are bound to keys: FlagKeys maps a key name to a flag name in Flags.
	Flags    Flags
	FlagKeys map[string]string
	// Cache, when set, is a folder of resolutions (DefaultCacheDir):
	// Load uses the one made of exactly these inputs, and keeps the one it
	// makes (cache.go). The hot commands set it; the hook's program, which
	// does not link viper, can load nothing else.
	Cache string
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
	v       Resolver
	sources map[string]Source
	// Files lists the config files that were read, lowest layer first.
	Files []string
	// problems are every problem Load met, in layer order.
	problems []*Error
}

// Problems lists every problem met loading the configuration, in layer
// order: warnings (a key left out) and broken layers (a file left out).
func (c *Config) Problems() []*Error { return c.problems }

// Warnings are the problems that left out one key each.
func (c *Config) Warnings() []*Error {
	var out []*Error
	for _, e := range c.problems {
		if !e.Broken() {
			out = append(out, e)
		}
	}
	return out
}

// Broken are the problems that left out a whole file: nexus's commands
// refuse to run on such a configuration, the host's doors go on without
// the file (Err).
func (c *Config) Broken() []*Error {
	var out []*Error
	for _, e := range c.problems {
		if e.Broken() {
			out = append(out, e)
		}
	}
	return out
}

// Err is the broken layers as one error (nil when every file loads).
func (c *Config) Err() error {
	var errs []error
	for _, e := range c.Broken() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// ErrorKind says what is wrong with a configuration, so that callers (the
// doctor's advice) need not match error text.
type ErrorKind int

// Kinds of configuration errors.
const (
	// KindBadValue is a value of the wrong type, outside its allowed
	// values, or breaking a rule between keys.
	KindBadValue ErrorKind = iota
	// KindUnknownKey is a key nexus does not know (a typo is never ignored).
	KindUnknownKey
	// KindUnparseable is a file that is not YAML, or not a mapping of keys.
	KindUnparseable
	// KindUntrusted is a project file setting what only the user may set
	// (internal/config/trust.go).
	KindUntrusted
	// KindUnreadable is a file that exists but cannot be read.
	KindUnreadable
)

func (k ErrorKind) String() string {
	return [...]string{"bad value", "unknown key", "unparseable file", "untrusted setting", "unreadable file"}[k]
}

// Error is a configuration problem in a file or variable. Load never
// stops at one (see Load): a problem in one key leaves that key out (a
// warning), a file that cannot be read or parsed leaves its layer out
// (Broken).
type Error struct {
	Kind  ErrorKind
	Layer string // LayerUser, LayerProject, LayerEnv or LayerFlag ("" for a rule between layers)
	Where string // "file:line:col", "NEXUS_X" or "--flag"
	Key   string
	Msg   string
	// Err is the underlying failure (KindUnreadable).
	Err error
	// Effect says what nexus does instead, filled in by Load: "so it is
	// ignored", "so gate.unplanned_edit stays deny (the default)", "nexus
	// reads nothing from this file until it is fixed".
	Effect string
	// Suggest is the known key an unknown one is probably a typo of.
	Suggest string

	pos int // where in its file (line, col), to list a file's problems in order
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.Where, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Where, e.Key, e.Msg)
}

// Broken reports whether the problem leaves a whole layer out: a file
// that cannot be read or parsed. Any other problem leaves out one key (a
// warning).
func (e *Error) Broken() bool { return e.Kind == KindUnparseable || e.Kind == KindUnreadable }

// Text is the problem with what nexus does about it, on one line.
func (e *Error) Text() string {
	if e.Effect == "" {
		return e.Error()
	}
	return e.Error() + "; " + e.Effect
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

// Load builds the effective configuration. viper holds the layers and
// resolves every value (defaults, the merged files, the environment bound
// under the NEXUS prefix, the bound flags); nexus adds what viper does not
// do: strict validation with file:line:col, the trust rules for project
// files (trust.go) and the provenance of every value.
//
// A configuration problem never stops nexus, and is never silent:
//
//   - an unknown key, a bad value, or a setting a project's file may not
//     make (trust.go) leaves that key out of its layer: it keeps the value
//     the layers below give it (its default when none does), and the
//     problem is a warning;
//   - a file that cannot be read or parsed leaves its whole layer out
//     (Error.Broken).
//
// Load returns the configuration of everything that loads (never nil) and
// every problem met, joined, as its error (nil when there is none; each is
// a *Error, also listed by Config.Problems). The only other error is a
// flag bound to a key no flag can set, a programming error, returned with
// a nil configuration.
//
// viper stays a priority lookup and nothing more: its own file reading
// (ReadInConfig) reports no line and column and cannot apply the trust
// rules before a value takes effect; its map merge lower-cases a
// consumer's keys (see mapping); AutomaticEnv lets a section's variable
// hide every key below it and replace a mapping with a string (see
// bindEnv); and its casts read "08" as octal and split lists on spaces
// (see Int, StringList). So nexus parses and checks every layer itself
// and hands viper checked values.
//
// With Options.Cache, a resolution of exactly these inputs made earlier is
// used as it is (without viper), and the one made here is kept. Without
// the priority lookup (a program that does not import
// internal/config/useviper) and without such a resolution, Load returns
// ErrUnresolved.
func Load(opts Options) (*Config, error) {
	key, cacheable := "", false
	if opts.Cache != "" {
		if key, cacheable = cacheKey(opts); cacheable {
			if c := readCache(opts.Cache, key); c != nil {
				return c, nil
			}
		}
	}
	mk := resolverFactory()
	if mk == nil {
		return nil, ErrUnresolved
	}
	c, err := load(opts, mk)
	// Only a configuration without a problem is kept: a program that
	// reads it (the front) has no problem to show, and one with problems
	// is nexus-full's to load and show every time.
	if cacheable && err == nil && c != nil && len(c.problems) == 0 {
		writeCache(opts.Cache, key, c)
	}
	return c, err
}

func load(opts Options, mk func() Resolver) (*Config, error) {
	c := &Config{v: mk(), sources: map[string]Source{}}
	for _, k := range Keys {
		def := k.Default
		if k.Kind == Map {
			def = mapping{}
		}
		c.v.SetDefault(k.Name, def)
		c.sources[k.Name] = Source{Layer: LayerDefault}
	}
	var other []error
	fail := func(errs ...*Error) {
		c.problems = append(c.problems, errs...)
	}

	files := fileLayers{}
	if !opts.NoUserFile {
		userFile := opts.UserFile
		if userFile == "" {
			userFile = UserFile(nil)
		}
		errs, err := c.mergeFile(userFile, LayerUser, files, "")
		fail(errs...)
		if err != nil {
			other = append(other, err)
		}
	}
	if opts.ProjectDir != "" {
		errs, err := c.mergeFile(filepath.Join(opts.ProjectDir, ProjectFile), LayerProject, files, opts.ProjectDir)
		fail(errs...)
		if err != nil {
			other = append(other, err)
		}
	}

	if !opts.IgnoreEnv {
		errs, err := c.bindEnv()
		fail(errs...)
		if err != nil {
			other = append(other, err)
		}
	}

	if opts.Flags != nil {
		for key, flag := range opts.FlagKeys {
			f, defined := lookupFlag(opts.Flags, flag)
			k, ok := Lookup(key)
			if !defined || !ok || k.Kind == Map {
				// A programming error, not the user's.
				return nil, fmt.Errorf("flag --%s is bound to %s, which is not a key a flag can set", flag, key)
			}
			if f.changed {
				if _, err := checkText(k, f.value); err != nil {
					fail(&Error{Kind: KindBadValue, Layer: LayerFlag, Where: "--" + flag, Key: key, Msg: err.Error()})
					continue
				}
			}
			if err := c.v.BindFlagValue(key, f); err != nil {
				return nil, fmt.Errorf("bind flag --%s: %w", flag, err)
			}
			if f.changed {
				c.sources[key] = Source{Layer: LayerFlag, Detail: "--" + flag}
			}
		}
	}
	if err := c.validate(); err != nil {
		// The rule between layers is broken: the safe reading is the
		// feature turned off.
		c.v.Set("memory.gc.auto", false)
		err.Effect = "so memory.gc.auto is off"
		fail(err)
	}
	c.explain()
	if len(other) > 0 {
		// viper refused checked values: nexus's own fault, reported as is.
		return c, errors.Join(append(c.problemErrs(), other...)...)
	}
	return c, errors.Join(c.problemErrs()...)
}

func (c *Config) problemErrs() []error {
	errs := make([]error, len(c.problems))
	for i, e := range c.problems {
		errs[i] = e
	}
	return errs
}

// explain fills in each problem's Effect from the configuration that
// loaded.
func (c *Config) explain() {
	for _, e := range c.problems {
		if e.Effect != "" {
			continue
		}
		switch {
		case e.Broken():
			e.Effect = "nexus reads nothing from this file until it is fixed"
		case e.Kind == KindUnknownKey && e.Suggest != "":
			e.Effect = "so it is ignored: " + c.stays(e.Suggest)
		case e.Kind == KindUnknownKey:
			e.Effect = "so it is ignored"
		default:
			if _, ok := Lookup(e.Key); !ok {
				e.Effect = "so it is ignored"
				break
			}
			e.Effect = "so " + c.stays(e.Key)
		}
	}
}

// stays says a key's effective value and where it came from.
func (c *Config) stays(key string) string {
	src := c.sources[key]
	from := "the default"
	if src.Layer != LayerDefault {
		from = "from " + src.String()
	}
	return fmt.Sprintf("%s stays %s (%s)", key, FormatValue(c.value(keyIndex[key])), from)
}

// FormatValue renders a value for people: "" for the empty string, a
// list in brackets, a mapping as one line of JSON (Go's map[k:v] form
// hides where a value ends).
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return `""`
		}
		return x
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case map[string]any:
		if b, err := json.Marshal(x); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// bindEnv binds each key that is not a mapping to its NEXUS_* variable
// (core.dir → NEXUS_CORE_DIR) and checks the variables that are set; a
// variable that does not check is left unbound and its error returned.
// Keys are bound one by one rather than with AutomaticEnv: AutomaticEnv
// lets a variable named after a section (NEXUS_MEMORY) hide every key
// below it, and would let a variable replace a whole mapping with a string.
func (c *Config) bindEnv() ([]*Error, error) {
	c.v.SetEnvPrefix(strings.TrimSuffix(EnvPrefix, "_"))
	c.v.SetEnvKeyReplacer(envKeyReplacer)
	var errs []*Error
	for i := range Keys {
		k := &Keys[i]
		name := EnvName(k.Name)
		val, set := os.LookupEnv(name)
		set = set && val != "" // an empty variable does not override (viper's rule)
		if k.Kind == Map {
			if set {
				errs = append(errs, &Error{Kind: KindBadValue, Layer: LayerEnv, Where: name, Key: k.Name, Msg: "a mapping cannot be set from the environment; set it in a configuration file (`nexus config keys` shows its form), or unset " + name})
			}
			continue
		}
		if set {
			if _, err := checkText(k, val); err != nil {
				errs = append(errs, &Error{Kind: KindBadValue, Layer: LayerEnv, Where: name, Key: k.Name, Msg: err.Error()})
				continue
			}
		}
		if err := c.v.BindEnv(k.Name); err != nil {
			return errs, fmt.Errorf("bind %s: %w", name, err)
		}
		if set {
			c.sources[k.Name] = Source{Layer: LayerEnv, Detail: name}
		}
	}
	return errs, nil
}

var envKeyReplacer = strings.NewReplacer(".", "_", "-", "_")

// EnvName is the environment variable for a key: core.dir → NEXUS_CORE_DIR.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(envKeyReplacer.Replace(key))
}

// EnvNames lists the environment variables nexus's configuration reads:
// each key's variable (mapping keys aside, which only files set) and
// XDG_CONFIG_HOME, where the user file is looked for. A host that passes
// an MCP server only the variables its entry lists gets this list.
func EnvNames() []string {
	var out []string
	for _, k := range Keys {
		if k.Kind != Map {
			out = append(out, EnvName(k.Name))
		}
	}
	return append(out, "XDG_CONFIG_HOME")
}

// MaxFileBytes bounds a configuration file (nexus.yaml, config.yaml):
// a file with every key set is a few KiB.
const MaxFileBytes = 1 << 20

// mapping is the value of a Map key. A type of its own keeps viper from
// lower-casing the keys inside it, which are not nexus's but a consumer's
// (a plugin's setting names are case-sensitive); viper therefore replaces
// a mapping rather than merging it, and fileLayers merges them instead.
type mapping map[string]any

// fileLayers holds each Map key's value merged over the files read so far.
type fileLayers map[string]mapping

// mergeFile validates one YAML layer and merges it into viper's file layer.
// A missing file is not a problem. nexus parses the file itself and hands
// viper the checked values (MergeConfigMap) instead of letting viper read it
// (MergeInConfig): problems must point at file:line:col, and the trust
// rules must see the project's values before any of them takes effect.
// A key whose value does not check, that nexus does not know, or that the
// layer may not set is left out (a warning each); a file that cannot be
// read or parsed is left out whole. The error is viper's refusal of
// checked values (nexus's own fault).
//
// The file is read as hostile input (safefile): bounded by MaxFileBytes,
// regular files only, never blocking on a FIFO. The project's file is read
// beneath the project (within, when not ""): a symlink leading out of it is
// refused. The user's file is the user's own, and its symlinks are
// followed.
func (c *Config) mergeFile(path, layer string, maps fileLayers, within string) ([]*Error, error) {
	var data []byte
	var err error
	if within != "" {
		data, err = safefile.ReadPathIn(within, path, MaxFileBytes)
	} else {
		data, err = safefile.ReadFile(path, MaxFileBytes)
	}
	if err != nil {
		// ENOTDIR: a parent of the path is a file, so the file cannot exist.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return []*Error{{Kind: KindUnreadable, Layer: layer, Where: path, Msg: "cannot be read: " + err.Error(), Err: err}}, nil
	}
	doc, err := yamljson.Decode(data)
	if err != nil {
		return []*Error{{Kind: KindUnparseable, Layer: layer, Where: path, Msg: "invalid YAML: " + err.Error()}}, nil
	}
	if doc.Value == nil {
		c.Files = append(c.Files, path)
		return nil, nil
	}
	root, ok := doc.Value.(map[string]any)
	if !ok {
		return []*Error{{Kind: KindUnparseable, Layer: layer, Where: path + ":1:1", Msg: "the config file must be a mapping of keys"}}, nil
	}
	flat := map[string]any{}
	problems := flatten(path, doc, root, "", "", flat)
	keys := make([]string, 0, len(flat))
	for key := range flat {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	// Every value is checked before any takes effect: a key the layer may
	// not set is left out, whatever else the file says.
	kept := keys[:0]
	for _, key := range keys {
		if msg := checkTrust(layer, key, flat[key]); msg != "" {
			pos := doc.PosOf("/" + strings.ReplaceAll(key, ".", "/"))
			problems = append(problems, &Error{Kind: KindUntrusted, Where: fmt.Sprintf("%s:%d:%d", path, pos.Line, pos.Col), Key: key, Msg: msg, pos: pos.Line<<20 | pos.Col})
			continue
		}
		kept = append(kept, key)
	}
	for _, e := range problems {
		e.Layer = layer
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].pos < problems[j].pos })
	nested := map[string]any{}
	for _, key := range kept {
		val := flat[key]
		if m, ok := val.(map[string]any); ok {
			merged := mapping(mergeValue(map[string]any(maps[key]), m).(map[string]any))
			maps[key] = merged
			val = merged
		}
		setPath(nested, key, val)
		c.sources[key] = Source{Layer: layer, Detail: path}
	}
	if err := c.v.MergeConfigMap(nested); err != nil {
		return problems, fmt.Errorf("merge config %s: %w", path, err)
	}
	c.Files = append(c.Files, path)
	return problems, nil
}

// setPath stores val at a dotted key in a nested map (viper's file shape).
func setPath(m map[string]any, key string, val any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = val
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

// flatten reads a file's mapping into dotted keys with checked values;
// a key it cannot take is left out and its problem returned.
func flatten(file string, doc *yamljson.Doc, m map[string]any, prefix, ptr string, out map[string]any) []*Error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []*Error
	for _, k := range keys {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		p := ptr + "/" + k
		pos := doc.PosOf(p)
		where := fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Col)
		order := pos.Line<<20 | pos.Col
		if def, ok := Lookup(name); ok {
			v, err := checkValue(def, m[k])
			if err != nil {
				problems = append(problems, &Error{Kind: KindBadValue, Where: where, Key: name, Msg: err.Error(), pos: order})
				continue
			}
			out[name] = v
			continue
		}
		if sub, ok := m[k].(map[string]any); ok && hasPrefix(name+".") {
			problems = append(problems, flatten(file, doc, sub, name, p, out)...)
			continue
		}
		msg := "unknown configuration key"
		s := suggest(name)
		if s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; `nexus config keys` lists the valid keys"
		problems = append(problems, &Error{Kind: KindUnknownKey, Where: where, Key: name, Msg: msg, Suggest: s, pos: order})
	}
	return problems
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

// allowed lists the values a string key may take (nil: any).
var allowed = map[string][]string{
	"gate.policy":           {"fail-open", "fail-closed"},
	"gate.unplanned_edit":   {"deny", "warn", "off"},
	"decisions.frontmatter": {"documented", "reference"},
	"log.level":             {"debug", "info", "warn", "error"},
}

// checkValue checks a file's value of a key: its kind, then its allowed
// values.
func checkValue(k *Key, v any) (any, error) {
	v, err := checkKind(k, v)
	if err != nil {
		return nil, err
	}
	return v, checkAllowed(k, v)
}

// checkText checks a variable's or a flag's text for a key.
func checkText(k *Key, s string) (any, error) {
	v, err := parseText(k, s)
	if err != nil {
		return nil, err
	}
	return v, checkAllowed(k, v)
}

func checkAllowed(k *Key, v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if k.Name == "harness.id" && !harnessid.Valid(s) {
		return fmt.Errorf("%q must match ^[a-z][a-z0-9-]*$", s)
	}
	if vals := allowed[k.Name]; vals != nil && !slices.Contains(vals, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(vals, ", "))
	}
	return nil
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
		return splitList(s), nil
	}
	return nil, fmt.Errorf("cannot be set from text")
}

// splitList reads a comma-separated list, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c *Config) validate() *Error {
	if c.Bool("memory.gc.auto") {
		var missing []string
		for _, k := range []string{"memory.gc.min_days_since_access", "memory.gc.min_cycles_since_access", "memory.gc.max_access_count"} {
			if c.sources[k].Layer == LayerDefault {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			src := c.sources["memory.gc.auto"]
			return &Error{Kind: KindBadValue, Where: src.String(), Key: "memory.gc.auto",
				Msg: fmt.Sprintf("automatic memory deletion needs all three signal thresholds; set %s (or turn memory.gc.auto off)", strings.Join(missing, ", "))}
		}
	}
	return nil
}

// String returns a string value.
func (c *Config) String(key string) string { return c.v.GetString(key) }

// Bool returns a boolean value.
func (c *Config) Bool(key string) bool { return c.v.GetBool(key) }

// Int returns an integer value. A variable's text is read as parseText
// checked it: viper's cast reads "08" as octal and fails.
func (c *Config) Int(key string) int {
	if s, ok := c.v.Get(key).(string); ok {
		n, _ := strconv.Atoi(s)
		return n
	}
	return c.v.GetInt(key)
}

// Float returns a number.
func (c *Config) Float(key string) float64 { return c.v.GetFloat64(key) }

// StringList returns a list of strings. In a variable or a flag the list is
// comma-separated (viper's cast would split on spaces instead).
func (c *Config) StringList(key string) []string {
	if s, ok := c.v.Get(key).(string); ok {
		return splitList(s)
	}
	return c.v.GetStringSlice(key)
}

// Map returns a mapping value (empty when unset).
func (c *Config) Map(key string) map[string]any {
	switch m := c.v.Get(key).(type) {
	case mapping:
		return m
	case map[string]any:
		return m
	}
	return map[string]any{}
}

// value is a key's effective value in its kind's Go type.
func (c *Config) value(k *Key) any {
	switch k.Kind {
	case Bool:
		return c.Bool(k.Name)
	case Int:
		return c.Int(k.Name)
	case Float:
		return c.Float(k.Name)
	case StringList:
		return c.StringList(k.Name)
	case Map:
		return c.Map(k.Name)
	}
	return c.String(k.Name)
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
		out = append(out, Entry{Key: k.Name, Value: c.value(&k), Source: c.sources[k.Name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Defaults returns the built-in defaults only (no files, no environment):
// for tests and for embedding nexus as a library.
func Defaults() *Config {
	c, err := Load(Options{NoUserFile: true, IgnoreEnv: true})
	if err != nil {
		panic("config: built-in defaults are invalid: " + err.Error())
	}
	return c
}
