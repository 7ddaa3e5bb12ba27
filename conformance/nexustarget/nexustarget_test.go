package nexustarget

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/testenv"
)

func TestToolErrorMapping(t *testing.T) {
	if te := conformance.AsToolError(toolError(&tools.Error{Message: "No active plan session"})); te == nil || te.Message != "No active plan session" {
		t.Fatalf("a *tools.Error must become a ToolError, got %v", te)
	}
	plain := errors.New("disk full")
	if err := toolError(plain); err != plain || conformance.AsToolError(err) != nil {
		t.Fatalf("other errors must stay target failures, got %v", err)
	}
	if toolError(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

func TestTarget(t *testing.T) {
	f, err := New(testenv.CoreDir(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.EventsUnsupported() != "" {
		t.Fatal("the factory must fire events")
	}
	dir := t.TempDir()
	p := conformance.Project{Dir: dir, NexusDir: filepath.Join(dir, ".nexus"), HarnessID: "test-harness"}
	ctx := context.Background()
	tg, err := f.NewTarget(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	_, err = tg.CallTool(ctx, "plan_decide", map[string]any{"issue_id": 1, "decision": "x"})
	if te := conformance.AsToolError(err); te == nil || te.Message != "No active plan session" {
		t.Fatalf("plan_decide without a plan: %v", err)
	}
	if _, err := tg.CallTool(ctx, "no_such_tool", nil); err == nil || conformance.AsToolError(err) != nil {
		t.Fatalf("an unknown tool must be a target failure, got %v", err)
	}
	if err := tg.Event(ctx, conformance.EventAgentSpawn, map[string]any{"agent_name": "engineer", "agent_id": "e1"}); err != nil {
		t.Fatal(err)
	}
	err = tg.Event(ctx, conformance.EventAgentResume, map[string]any{"agent_id": "ghost"})
	if te := conformance.AsToolError(err); te == nil || !strings.Contains(te.Message, "ghost") {
		t.Fatalf("resuming an unknown agent: %v", err)
	}
	// The event ran through the harness's lifecycle engine, on the case's
	// tracker in its harness namespace.
	entries, ok, err := tg.(*target).h.Engine.Store.ReadTracker()
	if err != nil || !ok || len(entries) != 1 || entries[0].HarnessID != "test-harness" || entries[0].AgentID != "e1" {
		t.Fatalf("tracker %+v (%v, %v)", entries, ok, err)
	}
}
