package grpcwire

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nexus-harness/nexus/plugins/sdk"
	pluginv1 "github.com/nexus-harness/nexus/plugins/sdk/proto/nexus/plugin/v1"
)

// This file and errors.go are the only importers of the generated package:
// everything else speaks the Go types of package sdk.

// Plugin binds an sdk.Plugin to go-plugin's gRPC transport. nexus uses it
// with a nil Impl; a plugin process sets Impl.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl sdk.Plugin
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the plugin's service on the plugin side.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return fmt.Errorf("sdk: no Plugin to serve; pass yours to pluginserver.Serve")
	}
	pluginv1.RegisterPluginServiceServer(s, &server{impl: p.Impl})
	return nil
}

// GRPCClient returns nexus's view of the plugin: an sdk.Plugin whose calls
// cross the process boundary.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &client{c: pluginv1.NewPluginServiceClient(c)}, nil
}

// Dispense returns the plugin behind a started go-plugin client.
func Dispense(c plugin.ClientProtocol) (sdk.Plugin, error) {
	raw, err := c.Dispense(PluginName)
	if err != nil {
		return nil, err
	}
	p, ok := raw.(sdk.Plugin)
	if !ok {
		return nil, fmt.Errorf("dispensed %T, which is not an sdk.Plugin", raw)
	}
	return p, nil
}

// client implements sdk.Plugin over gRPC (nexus's side). It implements
// every method; the embedded UnimplementedPlugin only marks it a Plugin.
type client struct {
	sdk.UnimplementedPlugin
	c pluginv1.PluginServiceClient
}

func (g *client) Info(ctx context.Context) (*sdk.Info, error) {
	r, err := g.c.Info(ctx, &pluginv1.InfoRequest{})
	if err != nil {
		return nil, callError("Info", err)
	}
	info := &sdk.Info{Name: r.GetName(), Version: r.GetVersion()}
	for _, e := range r.GetEvents() {
		info.Events = append(info.Events, sdk.EventName(e))
	}
	for _, t := range r.GetTools() {
		a := t.GetAnnotations()
		info.Tools = append(info.Tools, sdk.ToolSpec{
			Name:        t.GetName(),
			Description: t.GetDescription(),
			InputSchema: json.RawMessage(t.GetInputSchema()),
			Annotations: sdk.ToolAnnotations{
				Title:       a.GetTitle(),
				ReadOnly:    a.GetReadOnly(),
				Destructive: a.GetDestructive(),
				Idempotent:  a.GetIdempotent(),
				OpenWorld:   a.GetOpenWorld(),
			},
		})
	}
	return info, nil
}

func (g *client) Configure(ctx context.Context, cfg *sdk.Config) error {
	req := &pluginv1.ConfigureRequest{}
	if cfg != nil {
		req.ProjectDir = cfg.ProjectDir
		req.Settings = cfg.Settings
		req.DataDir = cfg.DataDir
	}
	if _, err := g.c.Configure(ctx, req); err != nil {
		return callError("Configure", err)
	}
	return nil
}

func (g *client) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	r, err := g.c.CallTool(ctx, &pluginv1.CallToolRequest{Name: name, Arguments: args})
	if err != nil {
		return nil, callError("CallTool "+name, err)
	}
	return &sdk.ToolResult{Text: r.GetText(), Structured: json.RawMessage(r.GetStructured()), IsError: r.GetIsError()}, nil
}

func (g *client) HandleEvent(ctx context.Context, ev *sdk.Event) (*sdk.EventReply, error) {
	req := &pluginv1.HandleEventRequest{}
	name := "HandleEvent"
	if ev != nil {
		req.Event = &pluginv1.Event{
			Name:      string(ev.Name),
			SessionId: ev.SessionID,
			AgentId:   ev.AgentID,
			AgentName: ev.AgentName,
			ToolName:  ev.ToolName,
			ToolInput: ev.ToolInput,
			Prompt:    ev.Prompt,
			Payload:   ev.Payload,
		}
		name += " " + string(ev.Name)
	}
	r, err := g.c.HandleEvent(ctx, req)
	if err != nil {
		return nil, callError(name, err)
	}
	return &sdk.EventReply{Deny: r.GetDeny(), Reason: r.GetReason(), Context: r.GetContext()}, nil
}

// server serves an sdk.Plugin over gRPC (the plugin's side).
type server struct {
	pluginv1.UnimplementedPluginServiceServer
	impl sdk.Plugin
}

// guard turns a panic in the plugin's code into an Internal status, so one
// bad call does not take the whole plugin process down.
func guard(method string, err *error) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "nexus plugin: panic in %s: %v\n%s", method, r, debug.Stack())
		*err = status.Errorf(codes.Internal, "plugin panicked in %s: %v", method, r)
	}
}

func (s *server) Info(ctx context.Context, _ *pluginv1.InfoRequest) (resp *pluginv1.InfoResponse, err error) {
	defer guard("Info", &err)
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, statusOf(err)
	}
	resp = &pluginv1.InfoResponse{}
	if info == nil {
		return resp, nil
	}
	resp.Name, resp.Version = info.Name, info.Version
	for _, e := range info.Events {
		resp.Events = append(resp.Events, string(e))
	}
	for _, t := range info.Tools {
		resp.Tools = append(resp.Tools, &pluginv1.ToolSpec{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: t.InputSchema,
			Annotations: &pluginv1.ToolAnnotations{
				Title:       t.Annotations.Title,
				ReadOnly:    t.Annotations.ReadOnly,
				Destructive: t.Annotations.Destructive,
				Idempotent:  t.Annotations.Idempotent,
				OpenWorld:   t.Annotations.OpenWorld,
			},
		})
	}
	return resp, nil
}

func (s *server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (resp *pluginv1.ConfigureResponse, err error) {
	defer guard("Configure", &err)
	if err := s.impl.Configure(ctx, &sdk.Config{ProjectDir: req.GetProjectDir(), Settings: req.GetSettings(), DataDir: req.GetDataDir()}); err != nil {
		return nil, statusOf(err)
	}
	return &pluginv1.ConfigureResponse{}, nil
}

func (s *server) CallTool(ctx context.Context, req *pluginv1.CallToolRequest) (resp *pluginv1.CallToolResponse, err error) {
	defer guard("CallTool", &err)
	res, err := s.impl.CallTool(ctx, req.GetName(), json.RawMessage(req.GetArguments()))
	if err != nil {
		return nil, statusOf(err)
	}
	if res == nil {
		return nil, status.Errorf(codes.Internal, "tool %q returned neither a result nor an error", req.GetName())
	}
	return &pluginv1.CallToolResponse{Text: res.Text, Structured: res.Structured, IsError: res.IsError}, nil
}

func (s *server) HandleEvent(ctx context.Context, req *pluginv1.HandleEventRequest) (resp *pluginv1.HandleEventResponse, err error) {
	defer guard("HandleEvent", &err)
	e := req.GetEvent()
	ev := &sdk.Event{
		Name:      sdk.EventName(e.GetName()),
		SessionID: e.GetSessionId(),
		AgentID:   e.GetAgentId(),
		AgentName: e.GetAgentName(),
		ToolName:  e.GetToolName(),
		ToolInput: json.RawMessage(e.GetToolInput()),
		Prompt:    e.GetPrompt(),
		Payload:   json.RawMessage(e.GetPayload()),
	}
	reply, err := s.impl.HandleEvent(ctx, ev)
	if err != nil {
		return nil, statusOf(err)
	}
	if reply == nil {
		return &pluginv1.HandleEventResponse{}, nil
	}
	return &pluginv1.HandleEventResponse{Deny: reply.Deny, Reason: reply.Reason, Context: reply.Context}, nil
}
