package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/sdktest"
)

// fake is a Plugin whose behaviour each test sets.
type fake struct {
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
		Events:  []string{"pre_tool_use", "session_start"},
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
	client, server := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{sdk.PluginName: &sdk.GRPCPlugin{Impl: f}})
	defer client.Close()
	raw, err := client.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	p := raw.(sdk.Plugin)
	go func() { <-f.entered; server.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = p.CallTool(ctx, "t", json.RawMessage(`{}`))
	if !errors.Is(err, sdk.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestVersionedPluginsIsGRPCOnly(t *testing.T) {
	vp := sdk.VersionedPlugins(nil)
	if len(vp) != 1 || vp[sdk.ProtocolVersion] == nil {
		t.Fatalf("VersionedPlugins = %v, want only version %d", vp, sdk.ProtocolVersion)
	}
	if _, ok := vp[sdk.ProtocolVersion][sdk.PluginName].(plugin.GRPCPlugin); !ok {
		t.Fatal("the version 2 set is not a gRPC plugin")
	}
	if sdk.Handshake.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatal("handshake protocol version differs from ProtocolVersion")
	}
}
