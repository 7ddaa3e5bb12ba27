package harness

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHookProject(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNexus := mk("a")
	mk("a/.nexus")
	deep := mk("a/src/pkg")
	withGit := mk("b")
	mk("b/.git")
	gitDeep := mk("b/x")
	bare := mk("c/d") // no marker up to root (t.TempDir has none)
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	claudeDir := mk("claude")
	tests := []struct {
		name, host, claude, dir, want string
	}{
		{"the folder holding .nexus", "claude", "", deep, withNexus},
		{"the folder holding .git", "neutral", "", gitDeep, withGit},
		{"a marker in the folder itself", "claude", "", withNexus, withNexus},
		{"no marker: the folder itself", "claude", "", bare, bare},
		{"CLAUDE_PROJECT_DIR first", "claude", claudeDir, deep, claudeDir},
		{"CLAUDE_PROJECT_DIR is Claude Code's only", "neutral", claudeDir, deep, withNexus},
		{"CLAUDE_PROJECT_DIR that is not a folder", "claude", file, deep, withNexus},
		{"no working directory", "claude", "", "", ""},
		{"a relative working directory", "claude", "", "a/src", ""},
		{"a working directory that is a file", "claude", "", file, ""},
		{"a working directory that does not exist", "claude", "", filepath.Join(root, "gone"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HookProject(tt.host, tt.claude, tt.dir); got != tt.want {
				t.Errorf("HookProject(%q, %q, %q) = %q, want %q", tt.host, tt.claude, tt.dir, got, tt.want)
			}
		})
	}
}
