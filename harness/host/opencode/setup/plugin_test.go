package setup

import (
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/host/opencode"
)

func TestPluginGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		o    PluginOptions
	}{
		{"project", PluginOptions{Nexus: "/usr/local/bin/nexus", Project: "/home/user/proj", Version: "0.3.0"}},
		{"user", PluginOptions{Nexus: "/home/user/go/bin/nexus", Version: "0.3.0\n// injected", Timeout: 5 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Plugin(c.o)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "plugin/"+c.name+".js", b)
		})
	}
}

// TestPluginLiterals: every value reaches the module as a JSON literal, so
// a path with quotes, backslashes, a template-literal dollar or a JavaScript
// line terminator cannot change the code around it.
func TestPluginLiterals(t *testing.T) {
	nexus := "/opt/we\"ird\\ $" + "{x}\u2028/nexus"
	b, err := Plugin(PluginOptions{Nexus: nexus, Project: "/p\n", Version: "1\u2028x"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`const NEXUS = "/opt/we\"ird\\ ${x}\u2028/nexus"`,
		`const PROJECT = "/p\n"`,
		`(nexus 1x)`,
		`const HOOKS = ["chat.message","tool.execute.before","tool.execute.after","event","dispose"]`,
		`const EVENTS = ["session.created"]`,
		`const GATED = ["tool.execute.before"]`,
		`const CLIP = {"tool.execute.after":65536}`,
		`const TIMEOUT_MS = 30000`,
		`const V = 1`,
		`const SERVE = ["hook","--host","opencode","--serve"]`,
		`const ONCE = ["hook","--host","opencode"]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("plugin lacks %s", want)
		}
	}
	if strings.ContainsRune(s, '\u2028') {
		t.Error("a raw U+2028 reached the module")
	}
}

func TestPluginRefuses(t *testing.T) {
	for _, o := range []PluginOptions{
		{Nexus: "nexus"},
		{Nexus: "/bin/nexus", Project: "rel"},
		{Nexus: "/bin/nexus", ServeArgs: []string{}},
		{Nexus: "/bin/nexus", Project: "/p\x8a"},
		{Nexus: "/bin/\xffnexus"},
	} {
		if _, err := Plugin(o); err == nil {
			t.Errorf("Plugin(%+v) rendered", o)
		}
	}
}

// TestReadPlugin: what a rendered plugin runs reads back as given, and a
// file nexus did not write is refused.
func TestReadPlugin(t *testing.T) {
	o := PluginOptions{Nexus: "/opt/we\"ird\u2028/nexus", Project: "/p q", ServeArgs: []string{"hook", "--serve", "--project", "/p q"}, CallArgs: []string{"hook"}}
	b, err := Plugin(o)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadPlugin(b)
	if err != nil {
		t.Fatal(err)
	}
	if in.Nexus != o.Nexus || in.Project != o.Project || strings.Join(in.ServeArgs, "|") != "hook|--serve|--project|/p q" || strings.Join(in.CallArgs, "|") != "hook" || in.Protocol != opencode.ProtocolVersion {
		t.Errorf("read back %+v", in)
	}
	for _, bad := range []string{"", "export const x = 1\n", strings.Replace(string(b), "const V = 1", "const V = one", 1), strings.Replace(string(b), "const ONCE", "const ONE", 1)} {
		if _, err := ReadPlugin([]byte(bad)); err == nil {
			t.Errorf("read a plugin from %.60q", bad)
		}
	}
}
