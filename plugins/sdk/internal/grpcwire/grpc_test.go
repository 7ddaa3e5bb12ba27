package grpcwire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/internal/grpcwire"
	"github.com/nexus-harness/nexus/plugins/sdk/sdktest"
)

// fake is a Plugin whose behaviour each test sets.
type fake struct {
	sdk.UnimplementedPlugin
	mu       sync.Mutex
	info     *sdk.Info
	gotCfg   *sdk.Config
	gotTool  string
	gotArgs  json.RawMessage
	gotEvent *sdk.Event
	result   *sdk.ToolResult
	reply    *sdk.EventReply
	err      error
	block    bool          // wait for ctx to end
	entered  chan struct{} // with block: receives when a call starts waiting
	panicMsg string
	ctxSeen  chan error // reports ctx.Err() after a blocked call ends
	deadline chan bool  // reports whether the call's ctx had a deadline
}

func (f *fake) Info(ctx context.Context) (*sdk.Info, error) { return f.info, f.err }

func (f *fake) Configure(ctx context.Context, cfg *sdk.Config) error {
	f.mu.Lock()
	f.gotCfg = cfg
	f.mu.Unlock()
	return f.err
}

func (f *fake) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	f.mu.Lock()
	f.gotTool, f.gotArgs = name, args
	f.mu.Unlock()
	if f.panicMsg != "" {
		panic(f.panicMsg)
	}
	if f.deadline != nil {
		_, ok := ctx.Deadline()
		f.deadline <- ok
	}
	if f.block {
		if f.entered != nil {
			f.entered <- struct{}{}
		}
		<-ctx.Done()
		if f.ctxSeen != nil {
			f.ctxSeen <- ctx.Err()
		}
		return nil, ctx.Err()
	}
	return f.result, f.err
}

func (f *fake) HandleEvent(ctx context.Context, ev *sdk.Event) (*sdk.EventReply, error) {
	f.mu.Lock()
	f.gotEvent = ev
	f.mu.Unlock()
	return f.reply, f.err
}

func TestRoundTripCarriesEveryField(t *testing.T) {
	info := &sdk.Info{
		Name:    "demo",
		Version: "1.2.3",
		Events:  []sdk.EventName{sdk.EventPreToolUse, sdk.EventSessionStart},
		Tools: []sdk.ToolSpec{{
			Name:        "lint",
			Description: "Lint a command",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`),
			Annotations: sdk.ToolAnnotations{Title: "Lint", ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true},
		}},
	}
	f := &fake{
		info:   info,
		result: &sdk.ToolResult{Text: "ok", Structured: json.RawMessage(`{"n":1}`), IsError: true},
		reply:  &sdk.EventReply{Deny: true, Reason: "no", Context: "extra"},
	}
	p := sdktest.Connect(t, f)
	ctx := context.Background()

	got, err := p.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, info) {
		t.Errorf("Info = %+v, want %+v", got, info)
	}

	cfg := &sdk.Config{ProjectDir: "/p", Settings: map[string]string{"k": "v"}}
	if err := p.Configure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.gotCfg, cfg) {
		t.Errorf("Configure received %+v, want %+v", f.gotCfg, cfg)
	}

	res, err := p.CallTool(ctx, "lint", json.RawMessage(`{"cmd":"ls"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, f.result) {
		t.Errorf("CallTool = %+v, want %+v", res, f.result)
	}
	if f.gotTool != "lint" || string(f.gotArgs) != `{"cmd":"ls"}` {
		t.Errorf("CallTool received %q %s", f.gotTool, f.gotArgs)
	}

	ev := &sdk.Event{
		Name: "pre_tool_use", SessionID: "s", AgentID: "a", AgentName: "engineer",
		ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), Prompt: "p",
		Payload: json.RawMessage(`{"x":1}`),
	}
	reply, err := p.HandleEvent(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.gotEvent, ev) {
		t.Errorf("HandleEvent received %+v, want %+v", f.gotEvent, ev)
	}
	if !reflect.DeepEqual(reply, f.reply) {
		t.Errorf("HandleEvent = %+v, want %+v", reply, f.reply)
	}
}

func TestNilRepliesAreSafe(t *testing.T) {
	p := sdktest.Connect(t, &fake{})
	info, err := p.Info(context.Background())
	if err != nil || info == nil || info.Name != "" {
		t.Fatalf("Info with nil reply = %+v, %v", info, err)
	}
	reply, err := p.HandleEvent(context.Background(), &sdk.Event{Name: "session_start"})
	if err != nil || reply == nil || reply.Deny {
		t.Fatalf("HandleEvent with nil reply = %+v, %v", reply, err)
	}
	_, err = p.CallTool(context.Background(), "x", nil)
	var re *sdk.RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "neither a result nor an error") {
		t.Fatalf("CallTool with nil result: %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name     string
		f        *fake
		is       error  // errors.Is target, or nil
		remote   string // substring of RemoteError.Message, or ""
		contains string // substring of Error()
	}{
		{name: "plain error", f: &fake{err: errors.New("store is locked")}, remote: "store is locked", contains: "plugin CallTool t failed: store is locked"},
		{name: "deadline from plugin", f: &fake{err: context.DeadlineExceeded}, is: context.DeadlineExceeded},
		{name: "canceled from plugin", f: &fake{err: context.Canceled}, is: context.Canceled},
		{name: "status unavailable", f: &fake{err: status.Error(codes.Unavailable, "down")}, is: sdk.ErrUnavailable},
		{name: "status unimplemented", f: &fake{err: status.Error(codes.Unimplemented, "nope")}, is: sdk.ErrUnimplemented},
		{name: "panic", f: &fake{panicMsg: "boom"}, remote: "plugin panicked in CallTool: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := sdktest.Connect(t, tt.f)
			_, err := p.CallTool(context.Background(), "t", json.RawMessage(`{}`))
			if err == nil {
				t.Fatal("want an error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if tt.remote != "" {
				var re *sdk.RemoteError
				if !errors.As(err, &re) || !strings.Contains(re.Message, tt.remote) {
					t.Errorf("error %q: want RemoteError containing %q", err, tt.remote)
				}
			}
			if tt.contains != "" && !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
		})
	}
}

func TestDeadlineReachesThePlugin(t *testing.T) {
	f := &fake{block: true, ctxSeen: make(chan error, 1), deadline: make(chan bool, 1)}
	p := sdktest.Connect(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.CallTool(ctx, "t", json.RawMessage(`{}`))
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("call took %v; the deadline was 50ms", elapsed)
	}
	if !<-f.deadline {
		t.Error("the plugin's context had no deadline")
	}
	select {
	case e := <-f.ctxSeen:
		if e == nil {
			t.Error("the plugin's context ended without an error")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the plugin's context was never cancelled")
	}
}

func TestCancellationReachesThePlugin(t *testing.T) {
	f := &fake{block: true, ctxSeen: make(chan error, 1), entered: make(chan struct{}, 1)}
	p := sdktest.Connect(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-f.entered; cancel() }()
	_, err := p.CallTool(ctx, "t", json.RawMessage(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want Canceled", err)
	}
	select {
	case e := <-f.ctxSeen:
		if !errors.Is(e, context.Canceled) {
			t.Errorf("plugin saw %v, want Canceled", e)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the plugin's context was never cancelled")
	}
}

func TestServerGoneIsUnavailable(t *testing.T) {
	f := &fake{block: true, entered: make(chan struct{}, 1)}
	client, server := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{grpcwire.PluginName: &grpcwire.Plugin{Impl: f}})
	defer client.Close()
	p, err := grpcwire.Dispense(client)
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-f.entered; server.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = p.CallTool(ctx, "t", json.RawMessage(`{}`))
	if !errors.Is(err, sdk.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestPluginSetsAreGRPCOnly(t *testing.T) {
	for name, vp := range map[string]map[int]plugin.PluginSet{"server": grpcwire.ServerPlugins(&fake{}), "client": grpcwire.ClientPlugins()} {
		if len(vp) != 1 || vp[sdk.ProtocolVersion] == nil {
			t.Fatalf("%s plugin set = %v, want only version %d", name, vp, sdk.ProtocolVersion)
		}
		if _, ok := vp[sdk.ProtocolVersion][grpcwire.PluginName].(plugin.GRPCPlugin); !ok {
			t.Fatalf("the %s's version 2 set is not a gRPC plugin", name)
		}
	}
}

// TestHandshakeIsTheWireProtocols holds the handshake to what
// docs/plugins.md tells authors in other languages and what every plugin
// already built carries: changing it breaks them all. Each call returns a
// value of its own.
func TestHandshakeIsTheWireProtocols(t *testing.T) {
	h := grpcwire.Handshake()
	if h.ProtocolVersion != 2 || sdk.ProtocolVersion != 2 ||
		h.MagicCookieKey != "NEXUS_PLUGIN_MAGIC_COOKIE" ||
		h.MagicCookieValue != "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3" {
		t.Fatalf("handshake = %+v, protocol %d: the wire protocol changed", h, sdk.ProtocolVersion)
	}
	h.MagicCookieValue = "changed"
	if grpcwire.Handshake().MagicCookieValue == "changed" {
		t.Fatal("a caller changed the handshake for everyone")
	}
	if grpcwire.EnvTLSCert != "NEXUS_PLUGIN_TLS_CERT" || grpcwire.EnvTLSKey != "NEXUS_PLUGIN_TLS_KEY" {
		t.Fatal("the TLS environment variables are part of the wire protocol; they changed")
	}
}

// toolsOnly implements Info and CallTool and leaves the rest to
// UnimplementedPlugin, as a plugin written against an older SDK leaves a
// method added later.
type toolsOnly struct{ sdk.UnimplementedPlugin }

func (toolsOnly) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "t", Version: "1", Tools: []sdk.ToolSpec{{Name: "x"}}}, nil
}

func (toolsOnly) CallTool(context.Context, string, json.RawMessage) (*sdk.ToolResult, error) {
	return &sdk.ToolResult{Text: "x"}, nil
}

// TestUnimplementedMethodsCrossTheWire checks what nexus sees of the
// methods a plugin leaves to UnimplementedPlugin: Configure succeeds (every
// nexus accepts a plugin that takes no settings), HandleEvent and a
// returned ErrUnimplemented arrive as sdk.ErrUnimplemented.
func TestUnimplementedMethodsCrossTheWire(t *testing.T) {
	ctx := context.Background()
	p := sdktest.Connect(t, toolsOnly{})
	if err := p.Configure(ctx, &sdk.Config{Settings: map[string]string{"k": "v"}}); err != nil {
		t.Fatalf("Configure left to UnimplementedPlugin = %v, want nil", err)
	}
	if res, err := p.CallTool(ctx, "x", nil); err != nil || res.Text != "x" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	_, err := p.HandleEvent(ctx, &sdk.Event{Name: sdk.EventSessionStart})
	if !errors.Is(err, sdk.ErrUnimplemented) || !strings.Contains(err.Error(), "HandleEvent session_start") {
		t.Fatalf("HandleEvent left to UnimplementedPlugin: %v, want ErrUnimplemented naming the call", err)
	}

	ev := sdktest.Connect(t, &fake{err: fmt.Errorf("only for Bash: %w", sdk.ErrUnimplemented)})
	if _, err := ev.CallTool(ctx, "t", nil); !errors.Is(err, sdk.ErrUnimplemented) {
		t.Fatalf("a returned ErrUnimplemented arrives as %v", err)
	}
	var bare sdk.UnimplementedPlugin
	if _, err := bare.CallTool(ctx, "t", nil); !errors.Is(err, sdk.ErrUnimplemented) || !strings.Contains(err.Error(), `"t"`) {
		t.Fatalf("UnimplementedPlugin.CallTool = %v", err)
	}
}
