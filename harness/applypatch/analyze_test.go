package applypatch

import (
	"slices"
	"testing"
)

func TestToolAnalyzer(t *testing.T) {
	a := ToolAnalyzer("patchText")
	for _, tt := range []struct {
		name    string
		input   map[string]any
		files   []string
		unknown bool
	}{
		{"every path of every operation, once", map[string]any{"patchText": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.go\n*** Move to: c.go\n@@\n-a\n+b\n*** Delete File: a.txt\n*** End Patch"}, []string{"a.txt", "b.go", "c.go"}, false},
		{"an update in place", map[string]any{"patchText": "*** Begin Patch\n*** Update File: /abs/d.go\n@@\n-a\n+b\n*** End Patch"}, []string{"/abs/d.go"}, false},
		{"not a patch", map[string]any{"patchText": "echo hi > x"}, nil, true},
		{"no patch text", map[string]any{}, nil, true},
		{"patch text that is not text", map[string]any{"patchText": []any{"*** Begin Patch"}}, nil, true},
		{"another argument holds it", map[string]any{"input": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := a(tt.input)
			if !slices.Equal(e.Files, tt.files) || e.Unknown != tt.unknown {
				t.Errorf("files %v unknown %v, want %v %v", e.Files, e.Unknown, tt.files, tt.unknown)
			}
			if tt.unknown && (!slices.Contains(e.Classes, "file_modification") || len(e.Why) == 0) {
				t.Errorf("an unreadable call must write unknown files, with a reason: %+v", e)
			}
		})
	}
}
