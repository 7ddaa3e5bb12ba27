package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/sdktest"
)

func TestAssess(t *testing.T) {
	tests := []struct {
		cmd     string
		refused bool
	}{
		{"rm -rf /", true},
		{"rm -fr /*", true},
		{"sudo rm -r -f /", true},
		{"rm --recursive --force ~", true},
		{"ls && rm -Rf $HOME/", true},
		{"/bin/rm -rf '/'", true},
		{"rm -rf ./build", false},
		{"rm -r /", false}, // not forced: rm asks
		{"rm -f /tmp/x", false},
		{"echo rm -rf /", false},
		{"ls -la /", false},
	}
	for _, tt := range tests {
		if _, got := assess(tt.cmd); got != tt.refused {
			t.Errorf("assess(%q) refused = %v, want %v", tt.cmd, got, tt.refused)
		}
	}
}

// TestThroughTheSDK calls the plugin the way nexus does, over gRPC in
// process.
func TestThroughTheSDK(t *testing.T) {
	p := sdktest.Connect(t, guard{})
	ctx := context.Background()
	reply, err := p.HandleEvent(ctx, &sdk.Event{Name: sdk.EventPreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)})
	if err != nil || !reply.Deny {
		t.Fatalf("rm -rf / not denied: %+v, %v", reply, err)
	}
	res, err := p.CallTool(ctx, "assess_command", json.RawMessage(`{"command":"ls"}`))
	if err != nil || res.IsError || string(res.Structured) != `{"refused":false}` {
		t.Fatalf("assess ls = %+v, %v", res, err)
	}
}
