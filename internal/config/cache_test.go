package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// cacheCase is a user file, a project file, variables and a flag, every
// kind of value among them (mappings holding integers, floats, lists and
// nested mappings), loaded with a cache folder.
func cacheCase(t *testing.T) (Options, string) {
	t.Helper()
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	proj := filepath.Join(dir, "proj")
	write(t, user, "log:\n  level: debug\ngate:\n  extra_capabilities:\n    engineer: [no_shell_exec]\nplugins:\n  settings:\n    p:\n      n: 9007199254740993\n      x: 3.0\n      list: [1, two, {three: 3}]\n      none: ~\n")
	write(t, filepath.Join(proj, ProjectFile), "mcp:\n  tool_prefix: proj_\nmemory:\n  merge:\n    threshold: 0.5\n  gc:\n    min_days_since_access: 8\nplugins:\n  disabled: [a, b]\n")
	setEnv(t, map[string]string{"NEXUS_GATE_POLICY": "fail-closed", "NEXUS_PLUGINS_HOOK_SERVER": "false"})
	flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
	flags.String("core", "", "")
	if err := flags.Parse([]string{"--core", "/opt/core"}); err != nil {
		t.Fatal(err)
	}
	return Options{ProjectDir: proj, UserFile: user, Flags: pflags{flags}, FlagKeys: map[string]string{"core.dir": "core"}, Cache: filepath.Join(dir, "cache")}, dir
}

func withoutResolver(t *testing.T) {
	t.Helper()
	saved := resolverFactory()
	UseResolver(nil)
	t.Cleanup(func() { UseResolver(saved) })
}

func equalConfigs(t *testing.T, got, want *Config) {
	t.Helper()
	g, w := got.All(), want.All()
	if !reflect.DeepEqual(g, w) {
		for i := range w {
			if !reflect.DeepEqual(g[i], w[i]) {
				t.Errorf("%s: cached %#v, resolved %#v", w[i].Key, g[i], w[i])
			}
		}
	}
	if !reflect.DeepEqual(got.Files, want.Files) {
		t.Errorf("files: cached %v, resolved %v", got.Files, want.Files)
	}
	for _, k := range Keys {
		if got.Source(k.Name) != want.Source(k.Name) || got.IsSet(k.Name) != want.IsSet(k.Name) {
			t.Errorf("%s: cached source %v, resolved %v", k.Name, got.Source(k.Name), want.Source(k.Name))
		}
	}
}

// A resolution read back from the cache, in a program without viper, is
// the one viper made: every value with its type (a mapping's integers stay
// int64, its floats float64), every source, the
// files read.
func TestCacheReadsBackTheResolution(t *testing.T) {
	o, _ := cacheCase(t)
	resolved, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	p := resolved.Map("plugins.settings")["p"].(map[string]any)
	if p["n"] != int64(9007199254740993) || p["x"] != 3.0 || p["none"] != nil {
		t.Fatalf("the case's own values: %#v", p)
	}
	withoutResolver(t)
	cached, err := Load(o)
	if err != nil {
		t.Fatalf("cached: %v", err)
	}
	if _, ok := cached.v.(frozen); !ok {
		t.Fatalf("not read from the cache: %T", cached.v)
	}
	equalConfigs(t, cached, resolved)
}

// Every input is part of the cache's key: a changed file, variable, flag
// or option is another resolution, which only viper can make.
func TestCacheKeyCoversEveryInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, o *Options, dir string)
	}{
		{"the project file", func(t *testing.T, o *Options, dir string) {
			write(t, filepath.Join(o.ProjectDir, ProjectFile), "mcp:\n  tool_prefix: other_\n")
		}},
		{"the user file", func(t *testing.T, o *Options, dir string) { write(t, o.UserFile, "log:\n  level: warn\n") }},
		{"the user file's place", func(t *testing.T, o *Options, dir string) {
			b, _ := os.ReadFile(o.UserFile)
			o.UserFile = filepath.Join(dir, "elsewhere.yaml")
			write(t, o.UserFile, string(b))
		}},
		{"a variable set", func(t *testing.T, o *Options, dir string) { t.Setenv("NEXUS_LOG_LEVEL", "error") }},
		{"a variable set empty", func(t *testing.T, o *Options, dir string) { t.Setenv("NEXUS_LOG_LEVEL", "") }},
		{"a variable changed", func(t *testing.T, o *Options, dir string) { t.Setenv("NEXUS_GATE_POLICY", "fail-open") }},
		{"a flag", func(t *testing.T, o *Options, dir string) { _ = o.Flags.(pflags).fs.Set("core", "/elsewhere") }},
		{"the environment ignored", func(t *testing.T, o *Options, dir string) { o.IgnoreEnv = true }},
		{"the user file left out", func(t *testing.T, o *Options, dir string) { o.NoUserFile = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, dir := cacheCase(t)
			if _, err := Load(o); err != nil {
				t.Fatal(err)
			}
			c.change(t, &o, dir)
			saved := resolverFactory()
			UseResolver(nil)
			_, err := Load(o)
			UseResolver(saved)
			if !errors.Is(err, ErrUnresolved) {
				t.Fatalf("after a change of %s, a program without viper loaded (%v)", c.name, err)
			}
			resolved, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			withoutResolver(t)
			cached, err := Load(o)
			if err != nil {
				t.Fatalf("the new resolution was not kept: %v", err)
			}
			equalConfigs(t, cached, resolved)
		})
	}
}

// A cache file nexus did not write as the user's own, or that does not
// decode as a whole resolution, is never read.
func TestCacheRefusesWhatItCannotTrust(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"writable by others", func(t *testing.T, path string) { os.Chmod(path, 0o666) }},
		{"cut short", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o600)
		}},
		{"a key missing", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"format":"`+cacheFormat+`","values":{},"sources":{}}`), 0o600)
		}},
		{"another format", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"format":"nexus-config-cache 0"}`), 0o600)
		}},
		{"a folder", func(t *testing.T, path string) { os.Remove(path); os.Mkdir(path, 0o700) }},
		{"a folder writable by others", func(t *testing.T, path string) { os.Chmod(filepath.Dir(path), 0o777) }},
		{"the folder a symbolic link", func(t *testing.T, path string) {
			dir := filepath.Dir(path)
			moved := dir + ".real"
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symbolic link to the user's own resolution", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "elsewhere.json")
			if err := os.Rename(path, other); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"another key's resolution", func(t *testing.T, path string) {
			// The user's own file, valid, for other inputs (another
			// project's), under this key's name: read as it stands it
			// would change every value.
			b, _ := os.ReadFile(path)
			key := strings.TrimSuffix(filepath.Base(path), ".json")
			os.WriteFile(path, bytes.Replace(b, []byte(key), []byte(strings.Repeat("0", len(key))), 1), 0o600)
		}},
		{"a value not allowed", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			spoilt := bytes.Replace(b, []byte(`"fail-closed"`), []byte(`"wide-open"`), 1)
			if bytes.Equal(spoilt, b) {
				t.Fatalf("no gate.policy value in %s", b)
			}
			os.WriteFile(path, spoilt, 0o600)
		}},
		{"too long", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, bytes.Repeat([]byte(" "), maxCacheFile)...), 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := cacheCase(t)
			if _, err := Load(o); err != nil {
				t.Fatal(err)
			}
			key, ok := cacheKey(o)
			if !ok {
				t.Fatal("no key")
			}
			c.spoil(t, filepath.Join(o.Cache, key+".json"))
			withoutResolver(t)
			if _, err := Load(o); !errors.Is(err, ErrUnresolved) {
				t.Fatalf("read a cache file %s: %v", c.name, err)
			}
		})
	}
}

// A configuration that does not load is not kept: the program without
// viper hands every such invocation to nexus-full, which reports it.
func TestCacheKeepsOnlyWhatLoads(t *testing.T) {
	for _, file := range []string{
		"log:\n  level: loud\n",    // a bad value: a warning
		"log:\n  levle: debug\n",   // an unknown key: a warning
		"log: [\n",                 // not YAML: the file is left out
		"runtime:\n  root: /etc\n", // a setting the project may not make
	} {
		t.Run(file, func(t *testing.T) {
			o, _ := cacheCase(t)
			write(t, filepath.Join(o.ProjectDir, ProjectFile), file)
			c, err := Load(o)
			if err == nil || c == nil || len(c.Problems()) == 0 {
				t.Fatalf("%q: loaded without a problem (%v)", file, err)
			}
			withoutResolver(t)
			if _, err := Load(o); !errors.Is(err, ErrUnresolved) {
				t.Fatalf("%q: a configuration with problems came from the cache: %v", file, err)
			}
		})
	}
}

// The folder keeps at most twice cacheKeep files.
func TestCacheIsPruned(t *testing.T) {
	o, _ := cacheCase(t)
	for i := range 3 * cacheKeep {
		t.Setenv("NEXUS_MCP_TOOL_PREFIX", "p"+string(rune('a'+i%26))+string(rune('a'+i/26))+"_")
		if _, err := Load(o); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(o.Cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 2*cacheKeep || len(entries) < cacheKeep {
		t.Fatalf("%d files kept, want between %d and %d", len(entries), cacheKeep, 2*cacheKeep)
	}
}

// FuzzDecodeSnapshot: a cache file of any bytes is read without a panic,
// and one that decodes encodes back to the same resolution.
func FuzzDecodeSnapshot(f *testing.F) {
	c, err := Load(Options{NoUserFile: true, IgnoreEnv: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snapshotBytes(f, c))
	f.Add([]byte(`{"format":"nexus-config-cache 2","key":"k","values":{"plugins.settings":{"m":{"p":{"l":[{"i":"1"},{"f":"2.5"},{"n":true}]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeSnapshot(data, "k")
		if err != nil {
			return
		}
		first := snapshotBytes(t, c)
		again, err := decodeSnapshot(first, "k")
		if err != nil {
			t.Fatalf("a decoded resolution does not decode again: %v", err)
		}
		if second := snapshotBytes(t, again); !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the resolution:\n%s\n%s", first, second)
		}
	})
}

// snapshotBytes is the cache file writeCache writes for c.
func snapshotBytes(t testing.TB, c *Config) []byte {
	t.Helper()
	dir := t.TempDir()
	writeCache(dir, "k", c)
	b, err := os.ReadFile(filepath.Join(dir, "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
