package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// fakeTarget is a scripted harness: each tool is a function over the
// scratch project, so runner tests control exactly what "the harness" does.
type fakeTarget struct {
	p      Project
	tools  map[string]fakeTool
	events map[string]fakeTool
	closed bool
}

type fakeTool func(p Project, params map[string]any) (map[string]any, error)

func (t *fakeTarget) CallTool(_ context.Context, tool string, params map[string]any) (map[string]any, error) {
	fn, ok := t.tools[tool]
	if !ok {
		return nil, errors.New("fake: unknown tool " + tool)
	}
	return fn(t.p, params)
}

func (t *fakeTarget) Event(_ context.Context, typ string, params map[string]any) error {
	fn, ok := t.events[typ]
	if !ok {
		return errors.New("fake: unknown event " + typ)
	}
	_, err := fn(t.p, params)
	return err
}

func (t *fakeTarget) Close() error { t.closed = true; return nil }

type fakeFactory struct {
	tools    map[string]fakeTool
	events   map[string]fakeTool
	noEvents string

	mu       sync.Mutex
	projects []Project
}

func (f *fakeFactory) NewTarget(_ context.Context, p Project) (Target, error) {
	f.mu.Lock()
	f.projects = append(f.projects, p)
	f.mu.Unlock()
	return &fakeTarget{p: p, tools: f.tools, events: f.events}, nil
}

func (f *fakeFactory) EventsUnsupported() string { return f.noEvents }

// writeJSON writes v under the project (a fake harness's state write).
func writeJSON(t testing.TB, p Project, rel string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t testing.TB, p Project, rel string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	schemasOnce sync.Once
	coreSchemas *schema.Set
)

func testSchemas(t testing.TB) *schema.Set {
	t.Helper()
	dir := testenv.CoreDir(t)
	schemasOnce.Do(func() { coreSchemas = schema.NewCoreSet(dir) })
	return coreSchemas
}

// osSource is a fixture directory on disk.
func osSource(dir, label string, optional bool) Source {
	return Source{FS: os.DirFS(dir), Dir: ".", Where: dir, Label: label, Optional: optional}
}
