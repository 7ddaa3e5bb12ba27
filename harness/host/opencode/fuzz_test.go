package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/tailscale/hujson"
)

// FuzzCodec feeds request lines through DecodeRequest, Decode and Encode
// on one codec (its record carries over between inputs): nothing panics,
// every event it makes is valid, a request it cannot read is an
// *InputError, and the reply carries the request's id.
func FuzzCodec(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.jsonl"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"v":1,"id":3,"hook":"chat.message","pid":1,"input":{"sessionID":"s"},"output":{"parts":[{"type":"text","synthetic":true,"text":"<task id=\"k\" state=\"error\">\n<task_error>\nx\n</task_error>"}]}}`))
	f.Add([]byte(`{"v":1,"id":4,"hook":"tool.execute.before","input":{"tool":"nexus_nx_task_add","sessionID":"s"},"output":{"args":{"n":1e999}}}`))
	c := NewCodec(nil)
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := DecodeRequest(line)
		if err != nil {
			return
		}
		evs, err := c.Decode(context.Background(), req)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode error %T: %v", err, err)
			}
			return
		}
		replies := make([]lifecycle.Reply, len(evs))
		for i, ev := range evs {
			if err := ev.Validate(); err != nil {
				t.Fatalf("invalid event %+v: %v", ev, err)
			}
			replies[i] = lifecycle.Reply{Context: ev.Name, Decision: "deny", Reason: ev.Tool}
		}
		rep := c.Encode(req, replies)
		if rep.ID != req.ID {
			t.Fatalf("reply id %d for request %d", rep.ID, req.ID)
		}
		if rep.Block != "" && req.Hook != HookToolBefore {
			t.Fatalf("%s blocked", req.Hook)
		}
	})
}

// FuzzServe: whatever arrives, Serve answers each non-blank line once, in
// order, with a line of JSON.
func FuzzServe(f *testing.F) {
	f.Add([]byte("{\"v\":1,\"id\":1,\"hook\":\"x\"}\n\n{\"v\":1,\"id\":2,\"hook\":\"y\"}"))
	f.Add([]byte("[\n{\"id\":5\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(in), &out, echoHook); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		want := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				want++
			}
		}
		got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if out.Len() == 0 {
			got = nil
		}
		if len(got) != want {
			t.Fatalf("%d replies for %d lines", len(got), want)
		}
		for _, l := range got {
			var r Reply
			if json.Unmarshal(l, &r) != nil {
				t.Fatalf("reply %q is not JSON", l)
			}
		}
	})
}

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

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// fuzzStandard reads JSON with comments into a map (ok false when it is
// not an object nexus reads).
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
		if in.Nexus != nexus || in.Project != project || strings.Join(in.ServeArgs, "\x00") != strings.Join(serve, "\x00") || strings.Join(in.CallArgs, "\x00") != strings.Join(once, "\x00") || in.Protocol != ProtocolVersion {
			t.Fatalf("read back %+v from the plugin of %q %q", in, nexus, project)
		}
	})
}
