// Command testplugin is a nexus plugin whose misbehaviour the pluginhost
// tests choose through its settings (sent with Configure):
//
//	crash_on_call=N   exit on the Nth CallTool of this process
//	event_sleep=D     HandleEvent sleeps D, ignoring its deadline
//	deny=TEXT         pre_tool_use is denied when the tool input contains TEXT
//	context=TEXT      every event reply carries TEXT as context
//
// Tools: echo (returns its arguments), pid, block (waits for its deadline;
// {"started": FIFO} first writes a byte to FIFO),
// hang (ignores its deadline), env, stdin, config.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/pluginserver"
)

type testPlugin struct {
	sdk.UnimplementedPlugin
	mu       sync.Mutex
	cfg      *sdk.Config
	settings map[string]string
	calls    int
}

func obj(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

func (p *testPlugin) Info(context.Context) (*sdk.Info, error) {
	tool := func(name, desc string) sdk.ToolSpec {
		return sdk.ToolSpec{Name: name, Description: desc, InputSchema: obj(`"text":{"type":"string"}`),
			Annotations: sdk.ToolAnnotations{ReadOnly: true}}
	}
	// block takes the FIFO it signals on: nexus refuses parameters a
	// schema does not list.
	block := tool("block", "Wait until the call's deadline.")
	block.InputSchema = obj(`"text":{"type":"string"},"started":{"type":"string"}`)
	return &sdk.Info{
		Name:    "testplugin",
		Version: "0.0.1",
		Tools: []sdk.ToolSpec{
			tool("echo", "Return the arguments."),
			tool("pid", "Return the process id."),
			block,
			tool("hang", "Sleep for an hour, ignoring the deadline."),
			tool("env", "Return the environment."),
			tool("stdin", "Return what stdin holds."),
			tool("config", "Return the configuration received."),
		},
		Events: sdk.EventNames(),
	}, nil
}

func (p *testPlugin) Configure(_ context.Context, cfg *sdk.Config) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg = cfg
	p.settings = cfg.Settings
	return nil
}

func (p *testPlugin) setting(k string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settings[k]
}

func text(s string) *sdk.ToolResult { return &sdk.ToolResult{Text: s} }

func (p *testPlugin) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	p.mu.Lock()
	p.calls++
	n := p.calls
	p.mu.Unlock()
	if c, _ := strconv.Atoi(p.setting("crash_on_call")); c > 0 && n == c {
		fmt.Fprintf(os.Stderr, "testplugin: crashing on call %d as asked\n", n)
		os.Exit(3)
	}
	// Chatter on both streams: nexus must never let it reach its stdout.
	fmt.Fprintln(os.Stdout, "testplugin stdout chatter")
	fmt.Fprintln(os.Stderr, "testplugin stderr chatter")
	switch name {
	case "echo":
		return &sdk.ToolResult{Text: string(args), Structured: args}, nil
	case "pid":
		return text(strconv.Itoa(os.Getpid())), nil
	case "block":
		// {"started": FIFO}: say the call arrived, so a test waits for
		// this instead of sleeping and hoping.
		var a struct{ Started string }
		if json.Unmarshal(args, &a) == nil && a.Started != "" {
			if f, err := os.OpenFile(a.Started, os.O_WRONLY, 0); err == nil {
				f.Write([]byte{1})
				f.Close()
			}
		}
		<-ctx.Done()
		// The moment the call's context ended, for the cancellation
		// figure (the host's clock is the same machine's).
		fmt.Fprintf(os.Stderr, "testplugin: block %s ended at %d: %v\n", args, time.Now().UnixNano(), ctx.Err())
		return nil, ctx.Err()
	case "hang":
		time.Sleep(time.Hour)
		return text("woke up"), nil
	case "env":
		return text(strings.Join(os.Environ(), "\n")), nil
	case "stdin":
		done := make(chan string, 1)
		go func() {
			b, err := io.ReadAll(os.Stdin)
			done <- fmt.Sprintf("%q %v", b, err)
		}()
		select {
		case s := <-done:
			return text(s), nil
		case <-time.After(2 * time.Second):
			return text("stdin blocked"), nil
		}
	case "config":
		p.mu.Lock()
		defer p.mu.Unlock()
		b, _ := json.Marshal(p.cfg)
		return text(string(b)), nil
	}
	return &sdk.ToolResult{Text: "unknown tool " + name, IsError: true}, nil
}

func (p *testPlugin) HandleEvent(ctx context.Context, ev *sdk.Event) (*sdk.EventReply, error) {
	if d, err := time.ParseDuration(p.setting("event_sleep")); err == nil {
		time.Sleep(d)
	}
	reply := &sdk.EventReply{Context: p.setting("context")}
	if deny := p.setting("deny"); deny != "" && ev.Name == sdk.EventPreToolUse && strings.Contains(string(ev.ToolInput), deny) {
		reply.Deny, reply.Reason = true, "testplugin refuses "+deny
	}
	return reply, nil
}

func main() { pluginserver.Serve(&testPlugin{}) }
