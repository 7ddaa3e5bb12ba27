package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

func TestObserveUpsertsOneLinePerFile(t *testing.T) {
	now := time.Date(2026, 4, 16, 8, 52, 55, 250_000_000, time.UTC)
	p := newProject(t, Options{}, now)
	a := p.write("empirical-a-b.md", "# A\n")
	b := p.write("pattern-c-d.md", "# C\n")
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := p.m.Observe(ctx, a, "engineer", now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// relative to the project root, no agent, zero time
	if err := p.m.Observe(ctx, ".nexus/memory/pattern-c-d.md", "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := p.records()
	want := map[string]state.MemoryAccess{
		a: {Path: a, LastAccessedTS: "2026-04-16T08:52:57.250Z", AccessCount: 3, LastAgent: "engineer"},
		b: {Path: b, LastAccessedTS: "2026-04-16T08:52:55.250Z", AccessCount: 1, LastAgent: "lead"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records\n got %+v\nwant %+v", got, want)
	}
	if n := assertLogValid(t, p.m.store.L.MemoryAccessPath()); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
}

// Hooks run as separate processes: an older read recorded late counts but
// does not move the timestamp back.
func TestObserveKeepsNewestTimestamp(t *testing.T) {
	now := time.Date(2026, 4, 16, 12, 0, 0, 0, time.UTC)
	p := newProject(t, Options{}, now)
	a := p.write("empirical-a-b.md", "x")
	ctx := context.Background()
	if err := p.m.Observe(ctx, a, "late", now); err != nil {
		t.Fatal(err)
	}
	if err := p.m.Observe(ctx, a, "early", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	r := p.records()[a]
	if r.AccessCount != 2 || r.LastAgent != "late" || r.LastAccessedTS != "2026-04-16T12:00:00.000Z" {
		t.Fatalf("record %+v", r)
	}
}

func TestObserveOnlyMemoryFiles(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	ctx := context.Background()
	outside := filepath.Join(p.dir, "README.md")
	writeFile(t, outside, "x")
	secret := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, secret, "x")
	if err := os.Symlink(secret, p.mem("escape.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p.mem("to-readme.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.mem("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		outside,
		secret,
		p.mem("escape.md"),    // symlink leading out of memory/
		p.mem("to-readme.md"), // into the project, still out of memory/
		p.mem("sub"),          // a directory
		p.mem("missing.md"),
		p.mem("../history.json"),
		"",
	} {
		err := p.m.Observe(ctx, path, "x", time.Time{})
		if !errors.Is(err, ErrNotMemoryFile) {
			t.Errorf("Observe(%q) = %v, want ErrNotMemoryFile", path, err)
		}
	}
	if len(p.records()) != 0 {
		t.Fatalf("records written: %+v", p.records())
	}

	// A symlink inside memory/ to another memory file counts as a read of
	// that file; a path through a symlinked project dir is normalised.
	real := p.write("external-real-file.md", "x")
	if err := os.Symlink(real, p.mem("alias.md")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "proj")
	if err := os.Symlink(p.dir, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p.mem("alias.md"), filepath.Join(link, ".nexus", "memory", "external-real-file.md")} {
		if err := p.m.Observe(ctx, path, "x", time.Time{}); err != nil {
			t.Fatalf("Observe(%q): %v", path, err)
		}
	}
	if r := p.records()[real]; r.AccessCount != 2 {
		t.Fatalf("records %+v", p.records())
	}
}

func TestMergeLogs(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.jsonl")
	writeFile(t, other, `{"path":"/p/.nexus/memory/a.md","last_accessed_ts":"2026-04-16T10:00:00.000Z","access_count":4,"last_agent":"other-agent"}
{"path":"/p/.nexus/memory/c.md","last_accessed_ts":"2026-04-16T10:00:00.000Z","access_count":1,"last_agent":"other-agent"}
garbage
`)
	third := filepath.Join(dir, "third.jsonl")
	writeFile(t, third, `{"path":"/p/.nexus/memory/./b.md","last_accessed_ts":"2026-04-17T00:00:00.000Z","access_count":2,"last_agent":"third"}
`)
	own := []state.MemoryAccess{
		{Path: "/p/.nexus/memory/a.md", LastAccessedTS: "2026-04-16T11:00:00.000Z", AccessCount: 1, LastAgent: "mine"},
		{Path: "/p/.nexus/memory/b.md", LastAccessedTS: "2026-04-16T11:00:00.000Z", AccessCount: 1, LastAgent: "mine"},
	}
	got, err := MergeLogs(own, other, third)
	if err != nil {
		t.Fatal(err)
	}
	want := []state.MemoryAccess{
		{Path: "/p/.nexus/memory/a.md", LastAccessedTS: "2026-04-16T11:00:00.000Z", AccessCount: 5, LastAgent: "mine"},
		{Path: "/p/.nexus/memory/b.md", LastAccessedTS: "2026-04-17T00:00:00.000Z", AccessCount: 3, LastAgent: "third"},
		{Path: "/p/.nexus/memory/c.md", LastAccessedTS: "2026-04-16T10:00:00.000Z", AccessCount: 1, LastAgent: "other-agent"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged\n got %+v\nwant %+v", got, want)
	}
}
