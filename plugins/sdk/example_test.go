package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/sdktest"
)

// greeter offers one tool. It writes Info and CallTool and leaves
// Configure and HandleEvent to the embedded UnimplementedPlugin.
type greeter struct{ sdk.UnimplementedPlugin }

func (greeter) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{
		Name:    "hello",
		Version: "0.1.0",
		Tools: []sdk.ToolSpec{{
			Name:        "greet",
			Description: "Greet someone by name.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			Annotations: sdk.ToolAnnotations{ReadOnly: true, Idempotent: true},
		}},
	}, nil
}

func (greeter) CallTool(_ context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	var in struct{ Name string }
	if err := json.Unmarshal(args, &in); err != nil {
		// A domain failure is a result the agent reads, not an error.
		return &sdk.ToolResult{Text: "arguments: " + err.Error(), IsError: true}, nil
	}
	return &sdk.ToolResult{Text: "hello, " + in.Name}, nil
}

// A tools-only plugin. Its main would be `pluginserver.Serve(greeter{})`;
// here sdktest connects it in-process, and every call crosses the same gRPC
// adapters as when nexus calls the plugin's process.
func Example() {
	p, closeConn, err := sdktest.Pipe(greeter{})
	if err != nil {
		panic(err)
	}
	defer closeConn()
	ctx := context.Background()

	info, _ := p.Info(ctx)
	fmt.Println(info.Name, info.Version, info.Tools[0].Name)

	res, _ := p.CallTool(ctx, "greet", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(res.Text)

	// greeter subscribes to no event; had nexus sent one anyway, the
	// embedded UnimplementedPlugin would answer.
	_, err = p.HandleEvent(ctx, &sdk.Event{Name: sdk.EventSessionStart})
	fmt.Println(errors.Is(err, sdk.ErrUnimplemented))
	// Output:
	// hello 0.1.0 greet
	// hello, Ada
	// true
}

// guard subscribes to pre_tool_use and denies one shell command.
type guard struct{ sdk.UnimplementedPlugin }

func (guard) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "guard", Version: "0.1.0", Events: []sdk.EventName{sdk.EventPreToolUse}}, nil
}

func (guard) HandleEvent(_ context.Context, ev *sdk.Event) (*sdk.EventReply, error) {
	if ev.Name != sdk.EventPreToolUse || ev.ToolName != "Bash" {
		return &sdk.EventReply{}, nil
	}
	var in struct{ Command string }
	_ = json.Unmarshal(ev.ToolInput, &in)
	if strings.Contains(in.Command, "rm -rf /") {
		return &sdk.EventReply{Deny: true, Reason: "guard: refusing to delete the file system"}, nil
	}
	return &sdk.EventReply{}, nil
}

// A plugin that guards tool calls: its manifest subscribes it to
// pre_tool_use (for the Bash tool), its Info lists the event, and its reply
// may deny the call.
func Example_events() {
	p, closeConn, err := sdktest.Pipe(guard{})
	if err != nil {
		panic(err)
	}
	defer closeConn()
	for _, cmd := range []string{`{"command":"ls"}`, `{"command":"rm -rf /"}`} {
		reply, err := p.HandleEvent(context.Background(), &sdk.Event{
			Name: sdk.EventPreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(cmd),
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: deny=%v %q\n", cmd, reply.Deny, reply.Reason)
	}
	// Output:
	// {"command":"ls"}: deny=false ""
	// {"command":"rm -rf /"}: deny=true "guard: refusing to delete the file system"
}

// settings is a plugin that takes configuration: it implements Configure
// itself instead of the default, which ignores the settings.
type settings struct {
	sdk.UnimplementedPlugin
	prefix string
}

func (*settings) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "settings", Version: "0.1.0"}, nil
}

func (s *settings) Configure(_ context.Context, cfg *sdk.Config) error {
	s.prefix = cfg.Settings["prefix"] // plugins.settings.<name>.prefix in nexus configuration
	return nil
}

// Embedding UnimplementedPlugin is what keeps a plugin compiling when a
// later SDK adds a method to Plugin: the embedded value supplies it. A
// plugin overrides the methods it needs.
func ExampleUnimplementedPlugin() {
	s := &settings{}
	p, closeConn, err := sdktest.Pipe(s)
	if err != nil {
		panic(err)
	}
	defer closeConn()
	ctx := context.Background()
	if err := p.Configure(ctx, &sdk.Config{Settings: map[string]string{"prefix": "nx"}}); err != nil {
		panic(err)
	}
	fmt.Println("prefix:", s.prefix)
	_, err = p.CallTool(ctx, "anything", nil)
	fmt.Println(err)
	// Output:
	// prefix: nx
	// plugin CallTool anything: the plugin does not implement this call
}

func ExampleEventName_Known() {
	fmt.Println(sdk.EventPreToolUse.Known(), sdk.EventName("pre_commit").Known())
	// Output: true false
}
