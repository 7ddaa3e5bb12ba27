// Command shellguard is an example nexus plugin. It imports only the public
// SDK (github.com/nexus-harness/nexus/plugins/sdk and its pluginserver) and
// shows both things a plugin can do:
//
//   - offer a tool: assess_command says whether a shell command is one that
//     shellguard refuses, and why (exposed to agents as
//     shellguard_assess_command);
//   - subscribe to an event: on pre_tool_use it denies a Bash call whose
//     command would wipe the file system (rm -rf /, rm -rf ~, ...).
//
// Build it with `go build`, declare it in nexus-plugin.yaml (see
// docs/plugins.md) and check it with `nexus plugin verify shellguard`.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/pluginserver"
)

// guard implements sdk.Plugin: Info, CallTool and HandleEvent. It takes no
// settings, so Configure is left to the embedded UnimplementedPlugin (which
// also keeps guard compiling when a later SDK adds a method).
type guard struct{ sdk.UnimplementedPlugin }

const assessSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to assess."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

func (guard) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{
		Name:    "shellguard",
		Version: "0.1.0",
		Tools: []sdk.ToolSpec{{
			Name:        "assess_command",
			Description: "Say whether shellguard would refuse a shell command, and why.",
			InputSchema: json.RawMessage(assessSchema),
			Annotations: sdk.ToolAnnotations{Title: "Assess a shell command", ReadOnly: true, Idempotent: true},
		}},
		Events: []sdk.EventName{sdk.EventPreToolUse},
	}, nil
}

// verdict is assess_command's structured result.
type verdict struct {
	Refused bool   `json:"refused"`
	Reason  string `json:"reason,omitempty"`
}

func (guard) CallTool(_ context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	if name != "assess_command" {
		return &sdk.ToolResult{Text: "unknown tool " + name, IsError: true}, nil
	}
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return &sdk.ToolResult{Text: "arguments: " + err.Error(), IsError: true}, nil
	}
	v := verdict{}
	v.Reason, v.Refused = assess(in.Command)
	out, _ := json.Marshal(v)
	text := "allowed"
	if v.Refused {
		text = "refused: " + v.Reason
	}
	return &sdk.ToolResult{Text: text, Structured: out}, nil
}

func (guard) HandleEvent(_ context.Context, ev *sdk.Event) (*sdk.EventReply, error) {
	if ev.Name != sdk.EventPreToolUse || ev.ToolName != "Bash" {
		return &sdk.EventReply{}, nil
	}
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(ev.ToolInput, &in); err != nil {
		return nil, fmt.Errorf("read Bash input: %w", err)
	}
	if reason, refused := assess(in.Command); refused {
		return &sdk.EventReply{Deny: true, Reason: "shellguard: " + reason}, nil
	}
	return &sdk.EventReply{}, nil
}

func main() { pluginserver.Serve(guard{}) }
