package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// fakeBackend runs no process: it describes the declared tools it is told
// to and answers every call with the tool's name.
type fakeBackend struct {
	tools    []pluginhost.Tool
	startErr error
}

func (f *fakeBackend) Tools(context.Context) ([]pluginhost.Tool, error) { return f.tools, f.startErr }
func (f *fakeBackend) CallTool(_ context.Context, ref pluginhost.ToolRef, args json.RawMessage) (*sdk.ToolResult, error) {
	return &sdk.ToolResult{Text: ref.Name + " " + string(args)}, nil
}
func (f *fakeBackend) Dispatch(context.Context, *sdk.Event, []pluginhost.Subscriber) *pluginhost.DispatchResult {
	return &pluginhost.DispatchResult{}
}
func (f *fakeBackend) Verify(context.Context, string) (*pluginhost.VerifyReport, error) {
	return nil, errors.New("not here")
}
func (f *fakeBackend) Runtime(string) pluginhost.Runtime { return pluginhost.Runtime{} }
func (f *fakeBackend) Close() error                      { return nil }

func builtin(name string, tools ...string) *pluginhost.Manifest {
	m := &pluginhost.Manifest{Name: name, Version: "1.0.0", ProtocolVersion: sdk.ProtocolVersion, Executable: "/nonexistent/" + name, Source: pluginhost.SourceBuiltin}
	for _, t := range tools {
		m.Tools = append(m.Tools, pluginhost.ToolDecl{Name: t, CapabilityClasses: []string{}})
	}
	return m
}

func bare(m *pluginhost.Manifest) *pluginhost.Manifest { m.BareToolNames = true; return m }

func described(plugin, tool string) pluginhost.Tool {
	return pluginhost.Tool{
		ToolRef: pluginhost.ToolRef{Plugin: plugin, Tool: tool, Name: plugin + "_" + tool, CapabilityClasses: []string{}},
		Spec:    sdk.ToolSpec{Name: tool, Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
}

func TestServePlugins(t *testing.T) {
	tests := []struct {
		name          string
		serve         func(pluginhost.Tool) bool
		startErr      error
		wantServed    []string
		wantNotServed []string // substrings, one per line, in order
	}{
		{name: "all", wantServed: []string{"fx_echo", "other_ping"},
			wantNotServed: []string{`plugin zz: tool "fx_echo" is not served`, "plugin plan: tool plan_start: a nexus tool has that name"}},
		{name: "only one plugin's", serve: func(t pluginhost.Tool) bool { return t.Plugin == "other" }, wantServed: []string{"other_ping"},
			wantNotServed: []string{`plugin zz: tool "fx_echo" is not served`}},
		{name: "a plugin that did not start", startErr: errors.New("plugin down: handshake failed\nplugin gone: no executable"), wantServed: []string{"fx_echo", "other_ping"},
			wantNotServed: []string{`plugin zz: tool "fx_echo" is not served`, "plugin down: handshake failed", "plugin gone: no executable", "plugin plan: tool plan_start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := harness.New(harness.Options{Project: t.TempDir(), CoreDir: testenv.CoreDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			fake := &fakeBackend{startErr: tt.startErr, tools: []pluginhost.Tool{described("fx", "echo"), described("other", "ping"), described("plan", "start")}}
			m, err := pluginhost.Open(pluginhost.Options{
				ProjectDir: t.TempDir(), NoUserPlugins: true, Logger: pluginhost.NopLogger{},
				// zz's tool takes fx's exposed name: it is refused.
				Builtin: []*pluginhost.Manifest{builtin("fx", "echo"), builtin("other", "ping"), builtin("plan", "start"), bare(builtin("zz", "fx_echo"))},
				Backend: func(*pluginhost.Manager) (pluginhost.Backend, error) { return fake, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			before := len(e.Tools())
			notServed := e.ServePlugins(context.Background(), m, tt.serve)
			if len(notServed) != len(tt.wantNotServed) {
				t.Fatalf("not served: %q, want %d lines like %q", notServed, len(tt.wantNotServed), tt.wantNotServed)
			}
			for i, w := range tt.wantNotServed {
				if !strings.Contains(notServed[i], w) {
					t.Errorf("not served line %d: %q, want it to contain %q", i, notServed[i], w)
				}
			}
			var served []string
			for _, tool := range e.Tools() {
				if tool.Plugin != "" {
					served = append(served, tool.Name)
				}
			}
			if !slices.Equal(served, tt.wantServed) || len(e.Tools()) != before+len(tt.wantServed) {
				t.Errorf("served %v (%d tools, %d before), want %v", served, len(e.Tools()), before, tt.wantServed)
			}
			// nexus's own plan_start is still nexus's.
			if pt, _ := e.Tool("plan_start"); pt.Plugin != "" {
				t.Error("a plugin tool replaced nexus's plan_start")
			}
			// A served tool answers through the plugin.
			res, err := e.CallTool(context.Background(), tt.wantServed[0], map[string]any{"x": "y"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res["text"]; got != tt.wantServed[0]+` {"x":"y"}` {
				t.Errorf("call answered %v", res)
			}
		})
	}
}
