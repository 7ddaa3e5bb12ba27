package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
)

// The lifecycle engine takes the Manager as its MemoryHandler.
var _ lifecycle.MemoryHandler = (*memory.Manager)(nil)

// The lifecycle engine asks a memory handler for ReadsOf when it has it.
var _ interface {
	ReadsOf(tool string, input []byte, cwd string) []string
} = (*memory.Manager)(nil)

func engineWithMemory(t *testing.T) (*harness.Engine, *memory.Manager, string) {
	t.Helper()
	dir := t.TempDir()
	e, err := harness.New(harness.Options{Project: dir, CoreDir: testenv.CoreDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := memory.New(memory.Options{Store: e.Store, Policy: e.Core.MemoryPolicy(), MergeThreshold: 0.35, ToolPrefix: "nx_"})
	if err != nil {
		t.Fatal(err)
	}
	e.AttachMemory(m)
	return e, m, dir
}

func TestToolsThroughTheEngine(t *testing.T) {
	e, _, dir := engineWithMemory(t)
	ctx := context.Background()
	names := map[string]bool{}
	for _, tl := range e.Tools() {
		names[tl.Name] = true
	}
	if !names["memory_save"] || !names["memory_gc"] {
		t.Fatalf("memory tools not registered: %v", names)
	}

	res, err := e.CallTool(ctx, "memory_save", map[string]any{"category": "external", "topic": "GitHub API limits", "content": "5000 requests per hour per token."})
	if err != nil {
		t.Fatal(err)
	}
	if res["action"] != "created" || res["file"] != "external-github-api-limits.md" {
		t.Fatalf("save result %v", res)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".nexus", "memory", "external-github-api-limits.md")); err != nil || !strings.Contains(string(b), "5000 requests") {
		t.Fatalf("file: %q, %v", b, err)
	}

	// parameter checks: the schema rejects, the tool explains
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"category": "lessons", "topic": "a b", "content": "x"}, "category"},
		{map[string]any{"category": "external", "topic": "a b"}, "content"},
		{map[string]any{"category": "external", "topic": "node 20 quirks", "content": "x"}, "date or version"},
	} {
		_, err := e.CallTool(ctx, "memory_save", c.args)
		var te *tools.Error
		if !errors.As(err, &te) || !strings.Contains(te.Message, c.want) {
			t.Errorf("memory_save(%v) = %v; want a tool error about %s", c.args, err, c.want)
		}
	}

	rep, err := e.CallTool(ctx, "memory_gc", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := rep["files"].([]any)
	if len(files) != 1 {
		t.Fatalf("gc report %v", rep)
	}
	// Deleting outside git is a tool error and deletes nothing.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err = e.CallTool(ctx, "memory_gc", map[string]any{"delete": []any{"external-github-api-limits.md"}})
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "git") {
		t.Fatalf("delete outside git = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".nexus", "memory", "external-github-api-limits.md")); err != nil {
		t.Fatal("file deleted by a refused call")
	}
}

func TestInstallChainsTaskCloseHook(t *testing.T) {
	e, _, _ := engineWithMemory(t)
	// Install keeps a hook that was there before it.
	called := false
	env := e.Env()
	env.OnTaskClose = func(context.Context) { called = true }
	m2, err := memory.New(memory.Options{Store: e.Store, Policy: e.Core.MemoryPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	e.AttachMemory(m2)
	env.OnTaskClose(context.Background())
	if !called {
		t.Fatal("the earlier task_close hook was dropped")
	}
}
