package codex

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestAnalyzePatchTool(t *testing.T) {
	cases := []struct {
		name    string
		patch   any
		files   []string
		unknown bool
	}{
		{"add", "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", []string{"a.txt"}, false},
		{"update", "*** Begin Patch\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch", []string{"b.go"}, false},
		{"delete", "*** Begin Patch\n*** Delete File: c.md\n*** End Patch", []string{"c.md"}, false},
		{"move", "*** Begin Patch\n*** Update File: old.go\n*** Move to: new/new.go\n@@\n-a\n+b\n*** End Patch", []string{"old.go", "new/new.go"}, false},
		{"several", "*** Begin Patch\n*** Add File: a\n+1\n*** Update File: b\n@@\n-1\n+2\n*** Add File: a\n+2\n*** End Patch", []string{"a", "b"}, false},
		{"no end", "*** Begin Patch\n*** Add File: a\n+1\n", nil, true},
		{"not a patch", "rm -rf /", nil, true},
		{"no text", nil, nil, true},
		{"not text", 42.0, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := map[string]any{}
			if c.patch != nil {
				in["command"] = c.patch
			}
			e := analyzePatchTool(in)
			if !reflect.DeepEqual(e.Files, c.files) || e.Unknown != c.unknown || !slices.Contains(e.Classes, classModify) {
				t.Errorf("classes %v files %q unknown %v; want files %q unknown %v (why %q)", e.Classes, e.Files, e.Unknown, c.files, c.unknown, e.Why)
			}
			if c.unknown && len(e.Why) == 0 {
				t.Error("an unreadable patch gives no reason")
			}
		})
	}
}

func TestAnalyzeShell(t *testing.T) {
	heredoc := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hd.txt\n+x\n*** End Patch\nEOF\n"
	cases := []struct {
		cmd     string
		files   []string
		unknown bool
		why     string
	}{
		{"ls -la", nil, false, ""},
		{"echo hi > out.txt", nil, false, ""}, // the gate's own shell analysis sees this one
		{heredoc, []string{"hd.txt"}, false, "apply_patch through the shell"},
		{"cd sub && " + heredoc, []string{"sub/hd.txt"}, false, "apply_patch through the shell"},
		// Codex applies the heredoc it intercepts as written; one the shell
		// runs is expanded first.
		{"apply_patch <<EOF\n*** Begin Patch\n*** Add File: $X\n+x\n*** End Patch\nEOF\n", []string{"$X"}, false, "apply_patch through the shell"},
		{"true; apply_patch <<EOF\n*** Begin Patch\n*** Add File: $X\n+x\n*** End Patch\nEOF\n", nil, true, "expands"},
		{"cat p | apply_patch", nil, true, "pipe"},
		{"bash", nil, true, "write_stdin"},
		{"python3", nil, true, "write_stdin"},
		{"env FOO=1 nohup bash -i", nil, true, "write_stdin"},
		{"bash -s", nil, true, "write_stdin"},
		{"python3 -i script.py", nil, true, "write_stdin"},
		{"bash -lc 'ls'", nil, false, ""},
		{"python3 script.py", nil, false, ""},
		{"python3 -c 'print(1)'", nil, false, ""},
		{"node -e 1", nil, false, ""},
		{"echo ls | bash", nil, false, ""},
		{"bash < script.sh", nil, false, ""},
		{"bash <<'EOF'\nls\nEOF\n", nil, false, ""},
		{"timeout 5 python3", nil, true, "write_stdin"},
		{"bash \"$SCRIPT\"", nil, false, ""},
		{"cat", nil, false, ""},
	}
	for _, c := range cases {
		e := analyzeShell(map[string]any{"command": c.cmd})
		if !reflect.DeepEqual(e.Files, c.files) || e.Unknown != c.unknown || (c.why != "" && !strings.Contains(strings.Join(e.Why, "; "), c.why)) {
			t.Errorf("%q: files %q unknown %v why %q; want %q %v %q", c.cmd, e.Files, e.Unknown, e.Why, c.files, c.unknown, c.why)
		}
		if (e.Unknown || len(e.Files) > 0) && !slices.Contains(e.Classes, classModify) {
			t.Errorf("%q: a writing effect without %s: %v", c.cmd, classModify, e.Classes)
		}
	}
	if e := analyzeShell(map[string]any{}); e.Unknown || len(e.Classes) > 0 {
		t.Errorf("no command: %+v", e)
	}
}

func TestUnfollowed(t *testing.T) {
	heredoc := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hd.txt\n+x\n*** End Patch\nEOF\n"
	cases := []struct {
		tool string
		cmd  any
		want bool
	}{
		{ToolShell, heredoc, true},
		{ToolShell, "cd sub && " + heredoc, true},
		{ToolShell, "ls && " + heredoc, false}, // the shell runs apply_patch: a PostToolUse follows
		{ToolShell, "ls", false},
		{ToolShell, 7.0, false},
		{ToolApplyPatch, heredoc, false},
	}
	for _, c := range cases {
		if got := Unfollowed(c.tool, map[string]any{"command": c.cmd}); got != c.want {
			t.Errorf("Unfollowed(%s, %q) = %v", c.tool, c.cmd, got)
		}
	}
}
