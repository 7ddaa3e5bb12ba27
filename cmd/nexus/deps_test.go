package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// heavy are the packages a hook process must not link: every package nexus
// links is initialised before main, on every hook (docs/performance.md,
// "The hook's own start"). Each is a prefix of import paths.
var heavy = []struct{ prefix, why string }{
	{"google.golang.org/grpc", "gRPC: plugins speak it in nexus-plugins"},
	{"github.com/hashicorp/go-plugin", "the plugin host runs in nexus-plugins"},
	{"github.com/mark3labs/mcp-go", "MCP serving and the doctor's probe run in nexus-full"},
	{"github.com/google/jsonschema-go", "mcp-go's schemas (120 µs and 80 KB of initialisation)"},
	{"gopkg.in/yaml.v3", "a second YAML library (nexus uses go.yaml.in/yaml/v3)"},
	{"github.com/spf13/cobra", "the command tree: the front parses its hot commands' flags itself"},
	{"github.com/spf13/pflag", "a flag library: the front parses its hot commands' flags itself (cmd/nexus/flags.go)"},
	{"github.com/spf13/viper", "the configuration's priority lookup: nexus-full resolves, the front reads the kept resolution (config.Options.Cache)"},
	{"github.com/spf13/afero", "viper's file systems (net/http among their imports)"},
	{"github.com/subosito/gotenv", "viper's dotenv codec (regexps compiled at initialisation)"},
	{"github.com/pelletier/go-toml", "viper's TOML codec"},
	{"github.com/fsnotify/fsnotify", "viper's file watching"},
	{"net/http", "HTTP: the MCP server's streamable HTTP runs in nexus-full"},
	{"crypto/tls", "TLS"},
	{"crypto/x509", "certificates"},
	{"html/template", "templates"},
	{"github.com/nexus-harness/nexus/cmd/nexus-full", "the full command line"},
	{"github.com/nexus-harness/nexus/harness/mcpserver", "MCP serving"},
	{"github.com/nexus-harness/nexus/harness/pluginhost/launch", "go-plugin's side of the plugin host"},
	{"github.com/nexus-harness/nexus/harness/host/setups", "install and doctor, in each host's setup package"},
	{"github.com/nexus-harness/nexus/harness/view", "nexus view"},
	{"github.com/nexus-harness/nexus/conformance", "the conformance runner"},
	{"github.com/nexus-harness/nexus/plugins/decisions/", "the decision store (decisionsapi alone is shared)"},
}

// heavyStd are standard packages a hook process must not link, by exact
// path (their names prefix others the front needs: net/url, net/netip).
var heavyStd = map[string]string{
	"net":  "the network stack (about 55 µs of initialisation with dnsmessage): pflag imported it, and the plugin host's hook client opens its Unix socket with system calls instead",
	"flag": "a flag library (pflag's): the front parses its hot commands' flags itself",
}

// TestHotDeps keeps the hook's program small: `go list -deps ./cmd/nexus`
// names no heavy package, and no host's setup package.
func TestHotDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/nexus")
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps ./cmd/nexus gave %d packages: %s", len(deps), out)
	}
	for _, d := range deps {
		for _, h := range heavy {
			if strings.HasPrefix(d, h.prefix) && d != "github.com/nexus-harness/nexus/plugins/decisions/decisionsapi" {
				t.Errorf("nexus links %s (%s): a hook process would initialise it; keep it in nexus-full", d, h.why)
			}
		}
		if why, ok := heavyStd[d]; ok {
			t.Errorf("nexus links %s (%s): a hook process would initialise it", d, why)
		}
		if strings.HasPrefix(d, "github.com/nexus-harness/nexus/harness/host/") && strings.HasSuffix(d, "/setup") {
			t.Errorf("nexus links %s: a host's setup (installer, doctor checks) belongs to nexus-full", d)
		}
	}
}

// initBudget is what the front's own packages (this module's) may allocate
// in their package initialisation, in bytes, together: every hook process
// pays it before main. Tables a hook needs only sometimes (a host's
// capability map, its interpreters, reflection over a schema type) are
// built on first use instead (sync.OnceValue). About 17 KB today.
const initBudget = 20 << 10

// TestFrontInit runs the front under GODEBUG=inittrace=1 and keeps what
// this module's packages allocate while initialising under initBudget, so
// that a package-level table, regexp or fmt.Sprintf does not creep back
// into every hook's start.
func TestFrontInit(t *testing.T) {
	front := commands.Path(t, "./cmd/nexus")
	home := t.TempDir()
	// The first run leaves the configuration's resolution to nexus-full,
	// which keeps it; the second is the front's alone.
	if r := run(t, front, home, env(t, home), "", "version"); r.code != 0 {
		t.Fatalf("nexus version: %d\n%s", r.code, r.stderr)
	}
	cmd := exec.Command(front, "version")
	cmd.Dir = home
	cmd.Env = append(env(t, home), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("nexus version: %v\n%s", err, stderr.String())
	}
	total, lines := 0, 0
	var own []string
	seen := map[string]bool{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init PKG @T ms, C ms clock, B bytes, N allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		if seen[f[1]] {
			t.Fatalf("the front handed nexus version to nexus-full (%s initialised twice):\n%s", f[1], stderr.String())
		}
		seen[f[1]] = true
		lines++
		if !strings.HasPrefix(f[1], "github.com/nexus-harness/nexus/") {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		total += b
		own = append(own, fmt.Sprintf("%s %d B", f[1], b))
	}
	if lines < 20 {
		t.Fatalf("no inittrace from the front (%d lines):\n%s", lines, stderr.String())
	}
	if total > initBudget {
		t.Errorf("the front's own packages allocate %d bytes initialising (budget %d): build what a hook needs only sometimes on first use (sync.OnceValue)\n%s",
			total, initBudget, strings.Join(own, "\n"))
	}
	t.Logf("%d bytes in %d own packages' initialisation", total, len(own))
}
