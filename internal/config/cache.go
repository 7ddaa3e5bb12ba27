package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// The resolution cache: the hook's program (cmd/nexus) does not link
// viper, so it reads the configuration viper resolved in an earlier
// process from a file named after a hash of every input of that
// resolution: the configuration files' bytes and paths, each NEXUS_*
// variable of a key, the bound flags, the Load options and the rules this
// package checks values with (Keys, allowed values, trust tables). A
// changed input is another file: nothing is ever stale, and when no file
// matches, nexus-full resolves (with viper) and writes one. Only a
// configuration that loads whole is kept. Nothing read from the folder
// is taken on trust beyond what the user could have written: the folder
// and the file must be the user's own and closed to writes by others, the
// file a regular one reached without a symbolic link and at most
// maxCacheFile bytes, and it must name the key it is read for (a file
// copied or linked under another key's name is refused) and hold every key
// with a value of its kind and allowed values. Anything else is no cache:
// nexus-full resolves again (docs/security.md, "The configuration
// resolution cache").

// cacheFormat changes when the cache's meaning changes without the rules
// changing (the way values are resolved).
const cacheFormat = "nexus-config-cache 2"

// maxCacheFile bounds a cache file; a resolution is a few KiB.
const maxCacheFile = 1 << 20

// cacheKeep bounds the files kept: past cacheKeep*2 the oldest go.
const cacheKeep = 32

// DefaultCacheDir is where the hot commands keep resolutions:
// <user cache dir>/nexus/config ("" when the platform has none).
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "nexus", "config")
}

// rulesHash names the rules values are checked and resolved with: every
// key (name, kind, default) and the allowed values and trust tables. It is
// written out by hand, not with fmt's %v, whose reflection cost a hook
// process about 80 µs.
var rulesHash = sync.OnceValue(func() string {
	h := sha256.New()
	w := func(s ...string) {
		for _, x := range s {
			h.Write([]byte(strconv.Quote(x)))
		}
		h.Write([]byte{'\n'})
	}
	w(cacheFormat)
	for _, k := range Keys {
		def := ""
		switch d := k.Default.(type) {
		case string:
			def = d
		case bool:
			def = strconv.FormatBool(d)
		case int:
			def = strconv.Itoa(d)
		case float64:
			def = strconv.FormatFloat(d, 'g', -1, 64)
		case []string:
			def = strings.Join(d, "\x00")
		case map[string]any:
			if len(d) > 0 {
				def = fmt.Sprint(d) // none today
			}
		default:
			def = fmt.Sprint(d)
		}
		w("key", k.Name, strconv.Itoa(int(k.Kind)), def)
	}
	for _, m := range []map[string]string{UserOnly, ProjectLocal} {
		for _, k := range sortedKeys(m) {
			w("trust", k)
		}
	}
	names := make([]string, 0, len(allowed))
	for k := range allowed {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		w(append([]string{"allowed", k}, allowed[k]...)...)
	}
	return hex.EncodeToString(h.Sum(nil))
})

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cacheKey hashes every input of Load(opts); ok is false when an input
// cannot be read the way Load reads it (Load then reports it).
func cacheKey(opts Options) (key string, ok bool) {
	h := sha256.New()
	fmt.Fprintf(h, "rules %s\nnouser %t ignoreenv %t\n", rulesHash(), opts.NoUserFile, opts.IgnoreEnv)
	file := func(layer, path string, read func() ([]byte, error)) bool {
		data, err := read()
		switch {
		case err == nil:
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "%s %q %x\n", layer, path, sum)
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			fmt.Fprintf(h, "%s absent\n", layer)
		default:
			return false
		}
		return true
	}
	if !opts.NoUserFile {
		path := opts.UserFile
		if path == "" {
			path = UserFile(nil)
		}
		if !file(LayerUser, path, func() ([]byte, error) { return safefile.ReadFile(path, MaxFileBytes) }) {
			return "", false
		}
	}
	if opts.ProjectDir != "" {
		path := filepath.Join(opts.ProjectDir, ProjectFile)
		if !file(LayerProject, path, func() ([]byte, error) { return safefile.ReadPathIn(opts.ProjectDir, path, MaxFileBytes) }) {
			return "", false
		}
	}
	if !opts.IgnoreEnv {
		for _, k := range Keys {
			name := EnvName(k.Name)
			if v, set := os.LookupEnv(name); set {
				fmt.Fprintf(h, "env %s=%q\n", name, v)
			}
		}
	}
	if opts.Flags != nil {
		keys := make([]string, 0, len(opts.FlagKeys))
		for k := range opts.FlagKeys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, defined := lookupFlag(opts.Flags, opts.FlagKeys[k])
			if !defined {
				return "", false
			}
			if f.changed {
				fmt.Fprintf(h, "flag %s --%s=%q\n", k, f.name, f.value)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// snapshot is a cache file.
type snapshot struct {
	Format  string                     `json:"format"`
	Key     string                     `json:"key"`
	Values  map[string]json.RawMessage `json:"values"`
	Sources map[string]Source          `json:"sources"`
	Files   []string                   `json:"files"`
}

// readCache returns the cached resolution named key, or nil.
func readCache(dir, key string) *Config {
	if !ownFolder(dir) {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, key+".json"), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !ownedByUser(st) || st.Size() > maxCacheFile {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil || len(data) > maxCacheFile {
		return nil
	}
	c, err := decodeSnapshot(data, key)
	if err != nil {
		return nil
	}
	return c
}

// ownFolder reports whether dir is a folder (not a symbolic link) of the
// user's, closed to writes by others: no one else can have put a file in
// it, nor replaced one.
func ownFolder(dir string) bool {
	st, err := os.Lstat(dir)
	return err == nil && st.IsDir() && ownedByUser(st)
}

// ownedByUser: the user's, and writable by no one else.
func ownedByUser(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid() && st.Mode().Perm()&0o022 == 0
}

// decodeSnapshot reads a cache file token by token (jsontext): decoding it
// with reflection cost a hook process about 80 µs, its type caches being
// cold in every process.
func decodeSnapshot(data []byte, key string) (*Config, error) {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	vals := make(frozen, len(Keys))
	sources := make(map[string]Source, len(Keys))
	var files []string
	format, named := "", ""
	err := object(d, func(name string) error {
		switch name {
		case "format":
			var err error
			format, err = readString(d)
			return err
		case "key":
			var err error
			named, err = readString(d)
			return err
		case "values":
			return object(d, func(key string) error {
				k, ok := keyIndex[key]
				if !ok {
					return fmt.Errorf("unknown key %q", key)
				}
				v, err := readValue(d, k.Kind)
				if err == nil {
					err = checkAllowed(k, v)
				}
				vals[key] = v
				return err
			})
		case "sources":
			return object(d, func(key string) error {
				var s Source
				err := object(d, func(field string) error {
					var err error
					switch field {
					case "layer":
						s.Layer, err = readString(d)
					case "detail":
						s.Detail, err = readString(d)
					default:
						err = fmt.Errorf("unknown source field %q", field)
					}
					return err
				})
				sources[key] = s
				return err
			})
		case "files":
			if d.PeekKind() == 'n' {
				_, err := d.ReadToken()
				return err
			}
			var err error
			files, err = stringList(d)
			return err
		}
		return fmt.Errorf("unknown member %q", name)
	})
	if err != nil {
		return nil, err
	}
	if format != cacheFormat {
		return nil, fmt.Errorf("format %q", format)
	}
	if named != key {
		return nil, fmt.Errorf("a resolution for key %q read as %q", named, key)
	}
	for _, k := range Keys {
		if _, ok := vals[k.Name]; !ok {
			return nil, fmt.Errorf("no value of %s", k.Name)
		}
		if _, ok := sources[k.Name]; !ok {
			return nil, fmt.Errorf("no source of %s", k.Name)
		}
	}
	return &Config{v: vals, sources: sources, Files: files}, nil
}

// object reads one JSON object, calling member with each member's name
// with the decoder before its value.
func object(d *jsontext.Decoder, member func(name string) error) error {
	t, err := d.ReadToken()
	if err != nil {
		return err
	}
	if t.Kind() != '{' {
		return fmt.Errorf("want an object, found %v", t.Kind())
	}
	for d.PeekKind() != '}' {
		name, err := readString(d)
		if err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err = d.ReadToken()
	return err
}

func readString(d *jsontext.Decoder) (string, error) {
	t, err := d.ReadToken()
	if err != nil {
		return "", err
	}
	if t.Kind() != '"' {
		return "", fmt.Errorf("want a string, found %v", t.Kind())
	}
	return t.String(), nil
}

func stringList(d *jsontext.Decoder) ([]string, error) {
	t, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	if t.Kind() != '[' {
		return nil, fmt.Errorf("want a list, found %v", t.Kind())
	}
	out := []string{}
	for d.PeekKind() != ']' {
		s, err := readString(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	_, err = d.ReadToken()
	return out, err
}

// readValue reads a key's value as encodeValue wrote it.
func readValue(d *jsontext.Decoder, kind Kind) (any, error) {
	switch kind {
	case StringList:
		return stringList(d)
	case Map:
		v, err := readNode(d)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("a mapping's value is not a mapping")
		}
		return m, nil
	}
	t, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch {
	case kind == String && t.Kind() == '"':
		return t.String(), nil
	case kind == Bool && (t.Kind() == 't' || t.Kind() == 'f'):
		return t.Bool(), nil
	case kind == Int && t.Kind() == '0':
		n, err := t.Int()
		return int(n), err
	case kind == Float && t.Kind() == '0':
		return t.Float()
	}
	return nil, fmt.Errorf("a %s value of kind %v", kind, t.Kind())
}

// readNode reads a value encodeNode wrote.
func readNode(d *jsontext.Decoder) (any, error) {
	var out any
	n := 0
	err := object(d, func(tag string) error {
		if n++; n > 1 {
			return errors.New("a node has one member")
		}
		var err error
		switch tag {
		case "n":
			_, err = d.ReadToken()
		case "s":
			out, err = readString(d)
		case "b":
			var t jsontext.Token
			if t, err = d.ReadToken(); err == nil {
				if t.Kind() != 't' && t.Kind() != 'f' {
					return errors.New("want a boolean")
				}
				out = t.Bool()
			}
		case "i":
			var s string
			if s, err = readString(d); err == nil {
				out, err = strconv.ParseInt(s, 10, 64)
			}
		case "f":
			var s string
			if s, err = readString(d); err == nil {
				out, err = strconv.ParseFloat(s, 64)
			}
		case "l", "L":
			var t jsontext.Token
			if t, err = d.ReadToken(); err != nil || t.Kind() != '[' {
				return errors.New("want a list")
			}
			list, strs := []any{}, []string{}
			for d.PeekKind() != ']' {
				v, err := readNode(d)
				if err != nil {
					return err
				}
				list = append(list, v)
				if tag == "L" {
					s, ok := v.(string)
					if !ok {
						return errors.New("a list of strings holds another value")
					}
					strs = append(strs, s)
				}
			}
			_, err = d.ReadToken()
			out = list
			if tag == "L" {
				out = strs
			}
		case "m":
			m := map[string]any{}
			err = object(d, func(k string) error {
				v, err := readNode(d)
				m[k] = v
				return err
			})
			out = m
		default:
			err = fmt.Errorf("a node tagged %q", tag)
		}
		return err
	})
	if err == nil && n != 1 {
		err = errors.New("a node has one member")
	}
	return out, err
}

// writeCache keeps c's resolution under key, best effort: a cache that
// cannot be written is no cache.
func writeCache(dir, key string, c *Config) {
	s := snapshot{Format: cacheFormat, Key: key, Values: map[string]json.RawMessage{}, Sources: c.sources, Files: c.Files}
	for _, k := range Keys {
		raw, err := encodeValue(k.Kind, c.value(&k))
		if err != nil {
			return // a value JSON cannot carry exactly: not cached
		}
		s.Values[k.Name] = raw
	}
	data, err := json.Marshal(s)
	if err != nil {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil || !ownFolder(dir) {
		return
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, key+".json")) != nil {
		os.Remove(tmp.Name())
		return
	}
	pruneCache(dir)
}

// pruneCache removes the oldest files past twice cacheKeep, down to
// cacheKeep: every edit of a configuration file leaves a file behind.
func pruneCache(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) <= 2*cacheKeep {
		return
	}
	type file struct {
		name string
		mod  int64
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, file{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod > files[j].mod })
	for _, f := range files[min(cacheKeep, len(files)):] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// encodeValue writes a key's value in its kind's Go type as JSON; a
// mapping's values keep their types (encodeNode).
func encodeValue(kind Kind, v any) (json.RawMessage, error) {
	if kind == Map {
		m, _ := v.(map[string]any)
		n, err := encodeNode(m)
		if err != nil {
			return nil, err
		}
		return json.Marshal(n)
	}
	return json.Marshal(v)
}

// encodeNode writes a value as a mapping holds it (YAML-shaped: strings,
// booleans, nil, int64, float64, lists, mappings) with its type, so that
// it reads back as exactly that value: JSON alone would turn an integer
// into a float64 and lose a float's infinities.
func encodeNode(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return map[string]any{"n": true}, nil
	case string:
		return map[string]any{"s": x}, nil
	case bool:
		return map[string]any{"b": x}, nil
	case int:
		return map[string]any{"i": strconv.Itoa(x)}, nil
	case int64:
		return map[string]any{"i": strconv.FormatInt(x, 10)}, nil
	case float64:
		return map[string]any{"f": strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			n, err := encodeNode(e)
			if err != nil {
				return nil, err
			}
			l[i] = n
		}
		return map[string]any{"l": l}, nil
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = map[string]any{"s": e}
		}
		return map[string]any{"L": l}, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			n, err := encodeNode(e)
			if err != nil {
				return nil, err
			}
			m[k] = n
		}
		return map[string]any{"m": m}, nil
	case mapping:
		return encodeNode(map[string]any(x))
	}
	return nil, fmt.Errorf("a value of type %T", v)
}
