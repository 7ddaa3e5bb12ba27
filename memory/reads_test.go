package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadsOf(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	a := p.write("empirical-a-b.md", "x")
	b := p.write("pattern-c-d.md", "x")
	writeFile(t, filepath.Join(p.dir, "src", "main.go"), "x")
	secret := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, secret, "x")
	if err := os.Symlink(secret, p.mem("escape.md")); err != nil {
		t.Fatal(err)
	}
	in := func(v map[string]any) []byte { b, _ := json.Marshal(v); return b }
	for _, c := range []struct {
		name  string
		tool  string
		input []byte
		cwd   string
		want  []string
	}{
		{"Read absolute", "Read", in(map[string]any{"file_path": a}), p.dir, []string{a}},
		{"Read relative", "Read", in(map[string]any{"file_path": ".nexus/memory/pattern-c-d.md"}), p.dir, []string{b}},
		{"Read with offset", "Read", in(map[string]any{"file_path": a, "offset": 10, "limit": 5}), "", []string{a}},
		{"read of another host", "read", in(map[string]any{"filePath": a}), "", []string{a}},
		{"Read outside memory", "Read", in(map[string]any{"file_path": filepath.Join(p.dir, "src", "main.go")}), p.dir, nil},
		{"Read of a symlink out", "Read", in(map[string]any{"file_path": p.mem("escape.md")}), p.dir, nil},
		{"Read of the folder", "Read", in(map[string]any{"file_path": p.mem("")}), p.dir, nil},
		{"Read of a missing file", "Read", in(map[string]any{"file_path": p.mem("gone.md")}), p.dir, nil},
		{"Write", "Write", in(map[string]any{"file_path": a, "content": "y"}), p.dir, nil},
		{"Edit", "Edit", in(map[string]any{"file_path": a, "old_string": "x", "new_string": "y"}), p.dir, nil},
		{"MultiEdit", "MultiEdit", in(map[string]any{"file_path": a}), p.dir, nil},
		{"Glob", "Glob", in(map[string]any{"pattern": ".nexus/memory/*.md"}), p.dir, nil},
		{"LS", "LS", in(map[string]any{"path": p.mem("")}), p.dir, nil},
		{"Grep default mode is a scan", "Grep", in(map[string]any{"pattern": "x", "path": a}), p.dir, nil},
		{"Grep over the folder", "Grep", in(map[string]any{"pattern": "x", "path": p.mem(""), "output_mode": "content"}), p.dir, nil},
		{"Grep content of one file", "Grep", in(map[string]any{"pattern": "x", "path": a, "output_mode": "content"}), p.dir, []string{a}},
		{"Grep content with a glob", "Grep", in(map[string]any{"pattern": "x", "path": a, "output_mode": "content", "glob": "*.md"}), p.dir, nil},
		{"Bash cat", "Bash", in(map[string]any{"command": "cat .nexus/memory/empirical-a-b.md"}), p.dir, []string{a}},
		{"Bash two viewers", "Bash", in(map[string]any{"command": "head -20 .nexus/memory/empirical-a-b.md && sed -n 1,5p .nexus/memory/pattern-c-d.md"}), p.dir, []string{a, b}},
		{"Bash cd then cat", "Bash", in(map[string]any{"command": "cd .nexus/memory && cat pattern-c-d.md"}), p.dir, []string{b}},
		{"Bash cat outside", "Bash", in(map[string]any{"command": "cat src/main.go"}), p.dir, nil},
		{"Bash glob", "Bash", in(map[string]any{"command": "cat .nexus/memory/*.md"}), p.dir, nil},
		{"Bash variable", "Bash", in(map[string]any{"command": "cat $M/empirical-a-b.md"}), p.dir, nil},
		{"Bash write", "Bash", in(map[string]any{"command": "echo hi > .nexus/memory/empirical-a-b.md"}), p.dir, nil},
		{"Bash listing", "Bash", in(map[string]any{"command": "ls -la .nexus/memory"}), p.dir, nil},
		{"Bash grep -r", "Bash", in(map[string]any{"command": "grep -rn lock .nexus/memory"}), p.dir, nil},
		{"Bash mention in prose", "Bash", in(map[string]any{"command": "echo 'see .nexus/memory/empirical-a-b.md'"}), p.dir, nil},
		{"Bash relative without cwd", "Bash", in(map[string]any{"command": "cat .nexus/memory/empirical-a-b.md"}), "", nil},
		{"nexus MCP tool", "mcp__nexus__nx_memory_save", in(map[string]any{"category": "empirical", "topic": "a b", "content": a}), p.dir, nil},
		{"not JSON", "Read", []byte("{"), p.dir, nil},
		{"wrong types", "Read", in(map[string]any{"file_path": 42}), p.dir, nil},
	} {
		got := p.m.ReadsOf(c.tool, c.input, c.cwd)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ReadsOf = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestObserveToolCall(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	a := p.write("empirical-a-b.md", "x")
	in, _ := json.Marshal(map[string]any{"command": "cat .nexus/memory/empirical-a-b.md | grep -n x"})
	got, err := p.m.ObserveToolCall(context.Background(), "Bash", in, p.dir, "researcher-1", time.Time{})
	if err != nil || len(got) != 1 || got[0] != a {
		t.Fatalf("ObserveToolCall = %q, %v", got, err)
	}
	if r := p.records()[a]; r.AccessCount != 1 || r.LastAgent != "researcher-1" {
		t.Fatalf("record %+v", r)
	}
}

// ReadsOf never panics and only ever names regular files inside the
// memory folder, whatever the host sends.
func FuzzReadsOf(f *testing.F) {
	p := newProject(f, Options{}, time.Time{})
	p.write("empirical-a-b.md", "x")
	writeFile(f, filepath.Join(p.dir, "outside.md"), "x")
	for _, s := range []struct{ tool, input string }{
		{"Read", `{"file_path":".nexus/memory/empirical-a-b.md"}`},
		{"Bash", `{"command":"cat .nexus/memory/empirical-a-b.md outside.md"}`},
		{"Bash", `{"command":"cd .nexus && head memory/empirical-a-b.md"}`},
		{"Grep", `{"path":".nexus/memory/empirical-a-b.md","output_mode":"content"}`},
		{"Read", `{"file_path":".nexus/memory/../outside.md"}`},
	} {
		f.Add(s.tool, s.input)
	}
	mem := p.m.Dir()
	f.Fuzz(func(t *testing.T, tool, input string) {
		for _, got := range p.m.ReadsOf(tool, []byte(input), p.dir) {
			if !strings.HasPrefix(got, mem+string(filepath.Separator)) {
				t.Fatalf("ReadsOf(%q, %q) names %s, outside %s", tool, input, got, mem)
			}
			st, err := os.Lstat(got)
			if err != nil {
				t.Fatalf("ReadsOf names %s: %v", got, err)
			}
			if !st.Mode().IsRegular() && st.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("ReadsOf names %s, not a file", got)
			}
		}
	})
}
