package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"

	"github.com/nexus-harness/nexus/harness/host/opencode"
)

// FuzzEditConfig: on any opencode.json, EditConfig refuses or installs; an
// install is idempotent, keeps every other key, and uninstall removes
// exactly nexus's entries.
func FuzzEditConfig(f *testing.F) {
	for _, c := range configCases {
		f.Add([]byte(c.src))
	}
	f.Add([]byte(`{"mcp": {"nexus": {"command": ["/x/nexus", "mcp"]}}, "a": [1, {"b": null}]}`))
	f.Add([]byte("{\n\t\"a\": 1, /* c */\n}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		in, err := EditConfig(src, install)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		again, err := EditConfig(in.Content, install)
		if err != nil || !bytes.Equal(again.Content, in.Content) {
			t.Fatalf("not idempotent (%v):\n%q\n%q", err, in.Content, again.Content)
		}
		before, ok1 := fuzzStandard(src)
		after, ok2 := fuzzStandard(in.Content)
		if !ok2 {
			t.Fatalf("the edit does not parse: %q", in.Content)
		}
		if !ok1 {
			return
		}
		out, err := EditConfig(in.Content, uninstall)
		if err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		removed, ok := fuzzStandard(out.Content)
		if !ok {
			t.Fatalf("the uninstall does not parse: %q", out.Content)
		}
		drop := func(m map[string]any, ours bool) {
			mcp, isObj := m["mcp"].(map[string]any)
			if !isObj {
				return
			}
			for _, n := range []string{"nexus", "nauro"} {
				if e, has := mcp[n]; has && (ours || ownEntry(mustParse(mustJSON(e)), testExe)) {
					delete(mcp, n)
				}
			}
			if len(mcp) == 0 {
				delete(m, "mcp")
			}
		}
		drop(before, false)
		drop(after, false)
		drop(removed, false)
		b1, _ := json.Marshal(before)
		b2, _ := json.Marshal(after)
		b3, _ := json.Marshal(removed)
		if !bytes.Equal(b1, b2) || !bytes.Equal(b1, b3) {
			t.Fatalf("other keys changed:\nbefore    %s\ninstalled %s\nremoved   %s", b1, b2, b3)
		}
	})
}

// FuzzReadPlugin: a plugin file (which a cloned repository can ship, and
// the doctor reads) never makes ReadPlugin panic, and every plugin Plugin
// renders reads back with what it runs.
func FuzzReadPlugin(f *testing.F) {
	for _, p := range []string{"project.js", "user.js"} {
		b, err := os.ReadFile(filepath.Join("testdata", "plugin", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add("/usr/local/bin/nexus", "/home/user/proj", b)
	}
	f.Add("/opt/we\"ird\u2028/nexus", "", []byte("const NEXUS = \"x\"\nconst V = 1e999\n"))
	f.Fuzz(func(t *testing.T, nexus, project string, raw []byte) {
		_, _ = ReadPlugin(raw)
		serve, once := HookArgs(project, "")
		b, err := Plugin(PluginOptions{Nexus: nexus, Project: project, ServeArgs: serve, CallArgs: once})
		if err != nil {
			return
		}
		in, err := ReadPlugin(b)
		if err != nil {
			t.Fatalf("a rendered plugin does not read back: %v", err)
		}
		if in.Nexus != nexus || in.Project != project || strings.Join(in.ServeArgs, "\x00") != strings.Join(serve, "\x00") || strings.Join(in.CallArgs, "\x00") != strings.Join(once, "\x00") || in.Protocol != opencode.ProtocolVersion {
			t.Fatalf("read back %+v from the plugin of %q %q", in, nexus, project)
		}
	})
}

func fuzzStandard(b []byte) (map[string]any, bool) {
	b = bytes.TrimPrefix(b, bom)
	if strings.TrimSpace(string(b)) == "" {
		return map[string]any{}, true
	}
	v, err := hujson.Parse(bytes.Clone(b))
	if err != nil {
		return nil, false
	}
	v.Standardize()
	var m map[string]any
	if json.Unmarshal(v.Pack(), &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
