package tools_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestArtifactWrite(t *testing.T) {
	runCases(t, []toolCase{{
		name: "creates the folder", tool: "artifact_write", args: map[string]any{"filename": "findings.md", "content": "# Findings\n"},
		want:  map[string]any{"$.success": true},
		state: map[string]map[string]any{".nexus/state/artifacts/findings.md": {}},
	}, {
		name: "sub folders", tool: "artifact_write", args: map[string]any{"filename": "sub/dir/x.md", "content": "x"},
		state: map[string]map[string]any{".nexus/state/artifacts/sub/dir/x.md": {}},
	}, {
		name: "dot dot", tool: "artifact_write", args: map[string]any{"filename": "../plan.json", "content": "{}"},
		errHas: `contains ".."`, state: map[string]map[string]any{planPath: nil},
	}, {
		name: "absolute", tool: "artifact_write", args: map[string]any{"filename": "/tmp/x.md", "content": "x"},
		errHas: "is absolute",
	}, {
		name: "missing content", tool: "artifact_write", args: map[string]any{"filename": "a.md"},
		errHas: `missing required parameter "content"`,
	}, {
		name: "empty name", tool: "artifact_write", args: map[string]any{"filename": "", "content": "x"},
		errHas: `parameter "filename"`,
	}})
}

func TestArtifactWriteContentAndPath(t *testing.T) {
	e, proj := newEngine(t)
	putFiles(t, proj, files{".nexus/state/artifacts/existing.md": "old content that is longer"})
	for _, content := range []string{"new content", ""} {
		res, msg := call(t, e, "artifact_write", map[string]any{"filename": "existing.md", "content": content})
		if msg != "" {
			t.Fatal(msg)
		}
		p, _ := res["path"].(string)
		want := filepath.Join(proj, ".nexus/state/artifacts/existing.md")
		if !filepath.IsAbs(p) || p != want {
			t.Fatalf("path = %q, want absolute %q", p, want)
		}
		if got := string(mustRead(t, p)); got != content {
			t.Fatalf("content = %q, want %q (verbatim, overwritten)", got, content)
		}
	}
}

func TestArtifactWriteRefusesSymlinkEscape(t *testing.T) {
	e, proj := newEngine(t)
	outside := t.TempDir()
	dir := filepath.Join(proj, ".nexus/state/artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := os.Symlink(filepath.Join(outside, "f.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	_, msg := call(t, e, "artifact_write", map[string]any{"filename": "out/x.md", "content": "x"})
	if !contains(msg, "symlink") || !contains(msg, filepath.Join(dir, "out")) {
		t.Errorf("out/x.md: error = %q, want a refusal naming the symlink", msg)
	}
	// A file that is itself a symlink is replaced by the new file (rename
	// replaces the link; it never writes through it).
	if _, msg := call(t, e, "artifact_write", map[string]any{"filename": "link.md", "content": "x"}); msg != "" {
		t.Errorf("link.md: %s", msg)
	}
	if st, err := os.Lstat(filepath.Join(dir, "link.md")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("link.md is not a regular file now: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote outside the artifacts folder: %v", entries)
	}
}
