package launch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Benchmarks report the median of their iterations (the mean that go test
// prints is skewed by the occasional slow start on a busy machine):
//
//	go test -run '^$' -bench . -benchtime 40x ./harness/pluginhost/

type samples []time.Duration

func (s samples) report(b *testing.B, unit string, scale time.Duration) {
	if len(s) == 0 {
		return
	}
	sorted := append(samples(nil), s...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	b.ReportMetric(float64(sorted[len(sorted)/2])/float64(scale), unit+"-median")
	b.ReportMetric(float64(sorted[len(sorted)*9/10])/float64(scale), unit+"-p90")
}

func quietOptions(mtls bool) Options {
	return Options{NoUserPlugins: true, DisableMTLS: !mtls, Logger: hclog.NewNullLogger()}
}

type mtlsCase struct {
	name string
	mtls bool
	auto bool // go-plugin's AutoMTLS instead of nexus-issued certificates
}

func (c mtlsCase) options() Options {
	o := quietOptions(c.mtls)
	o.GoPluginAutoMTLS = c.auto
	return o
}

func mtlsCases() []mtlsCase {
	return []mtlsCase{{"mtls", true, false}, {"go-plugin-automtls", true, true}, {"no-mtls", false, false}}
}

// BenchmarkStartToFirstCall: a cold plugin (checksum, launch, handshake,
// Info, Configure) answering its first tool call.
func BenchmarkStartToFirstCall(b *testing.B) {
	exe := testPluginBinary(b)
	man, err := LoadManifest(plugintest.WriteManifest(b, b.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	if err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(b.TempDir(), "digests.json")
	cases := append(mtlsCases(), mtlsCase{name: "mtls/digest-cache", mtls: true}, mtlsCase{name: "no-mtls/digest-cache"})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var s samples
			for b.Loop() {
				opts := c.options()
				if strings.HasSuffix(c.name, "digest-cache") {
					opts.DigestCache = cache
				}
				m, err := New([]*Manifest{man}, opts)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, err := m.CallTool(context.Background(), "tp_echo", json.RawMessage(`{}`)); err != nil {
					b.Fatal(err)
				}
				s = append(s, time.Since(t0))
				m.Close()
			}
			s.report(b, "ms", time.Millisecond)
		})
	}
}

// BenchmarkCallTool: one tool call round trip to a running plugin.
func BenchmarkCallTool(b *testing.B) {
	exe := testPluginBinary(b)
	man, err := LoadManifest(plugintest.WriteManifest(b, b.TempDir(), plugintest.Spec{Name: "tp", Exe: exe}))
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello"}`)
	for _, c := range mtlsCases() {
		b.Run(c.name, func(b *testing.B) {
			m, err := New([]*Manifest{man}, c.options())
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			if _, err := m.CallTool(ctx, "tp_echo", args); err != nil {
				b.Fatal(err)
			}
			var s samples
			for b.Loop() {
				t0 := time.Now()
				if _, err := m.CallTool(ctx, "tp_echo", args); err != nil {
					b.Fatal(err)
				}
				s = append(s, time.Since(t0))
			}
			s.report(b, "µs", time.Microsecond)
		})
	}
}

// BenchmarkFivePluginsTools: discover five plugins in a project and list
// their tools (all five started in parallel), as `nexus mcp` must before it
// can answer tools/list.
func BenchmarkFivePluginsTools(b *testing.B) {
	exe := testPluginBinary(b)
	project := b.TempDir()
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		plugintest.WriteManifest(b, ProjectPluginDir(project), plugintest.Spec{Name: n, Exe: exe})
	}
	cache := filepath.Join(b.TempDir(), "digests.json")
	cases := append(mtlsCases(), mtlsCase{name: "mtls/digest-cache", mtls: true})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var s samples
			for b.Loop() {
				t0 := time.Now()
				opts := c.options()
				opts.ProjectDir = project
				if strings.HasSuffix(c.name, "digest-cache") {
					opts.DigestCache = cache
				}
				m, err := Open(opts)
				if err != nil {
					b.Fatal(err)
				}
				tools, err := m.Tools(context.Background())
				if err != nil || len(tools) != 35 {
					b.Fatalf("%d tools, %v", len(tools), err)
				}
				s = append(s, time.Since(t0))
				m.Close()
			}
			s.report(b, "ms", time.Millisecond)
		})
	}
}

// BenchmarkHookDispatch: what a hook process pays for plugins: find five
// manifests, validate and start the one subscribed to pre_tool_use (schema
// compiled afresh each time, as in a new process), get its answer, and stop
// it. "none" is the same with no subscriber for the event.
func BenchmarkHookDispatch(b *testing.B) {
	project := installExample(b)
	exe := testPluginBinary(b)
	for _, n := range []string{"p1", "p2", "p3", "p4"} {
		plugintest.WriteManifest(b, ProjectPluginDir(project), plugintest.Spec{Name: n, Exe: exe,
			Events: "  session_start: {timeout: 1s, on_failure: fail-open}"})
	}
	in, _ := json.Marshal(map[string]string{"command": "rm -rf /"})
	cache := filepath.Join(b.TempDir(), "digests.json")
	cases := []struct {
		name  string
		mtls  bool
		cache bool
		tool  string
	}{
		{"one-subscriber/mtls", true, false, "Bash"},
		{"one-subscriber/no-mtls", false, false, "Bash"},
		{"one-subscriber/mtls/digest-cache", true, true, "Bash"},
		{"one-subscriber/no-mtls/digest-cache", false, true, "Bash"},
		{"none", true, false, "Read"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var s samples
			for b.Loop() {
				t0 := time.Now()
				opts := quietOptions(c.mtls)
				opts.ProjectDir = project
				opts.OnlyEvent, opts.OnlyTool = string(sdk.EventPreToolUse), c.tool
				if c.cache {
					opts.DigestCache = cache
				}
				m, err := Open(opts)
				if err != nil {
					b.Fatal(err)
				}
				r := m.Dispatch(context.Background(), &sdk.Event{Name: sdk.EventPreToolUse, ToolName: c.tool, ToolInput: in})
				m.Close()
				s = append(s, time.Since(t0))
				if r.Denied != (c.tool == "Bash") {
					b.Fatalf("result %+v", r)
				}
			}
			s.report(b, "ms", time.Millisecond)
		})
	}
}

// BenchmarkDigest: the sha256 of a plugin binary, paid at every start.
func BenchmarkDigest(b *testing.B) {
	exe := testPluginBinary(b)
	st, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var s samples
	for b.Loop() {
		t0 := time.Now()
		if _, err := FileSHA256(exe); err != nil {
			b.Fatal(err)
		}
		s = append(s, time.Since(t0))
	}
	s.report(b, "ms", time.Millisecond)
}
