package decisions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// A store written by current Nauro (nauro 1.15 / nauro-core 1.14): every
// file its format_decision wrote in the fenced-section and extra-frontmatter
// goldens, renumbered into one store. nexus lists and shows all of them,
// reports nothing unreadable, re-formats each byte for byte in the
// reference form, and an update keeps the whole rationale (fenced "## "
// lines, approval and unknown keys included).
func TestStoreWrittenByCurrentNauro(t *testing.T) {
	type golden struct {
		Cases []struct {
			ID       string `json:"id"`
			Expected *struct {
				FormattedReference string `json:"formatted_reference"`
				Parsed             struct {
					Rationale string `json:"rationale"`
					Status    string `json:"status"`
				} `json:"parsed"`
			} `json:"expected"`
		} `json:"cases"`
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	type written struct {
		num             int
		text, rationale string
		active          bool
	}
	var files []written
	for _, name := range []string{"fenced_sections.json", "extra_frontmatter.json"} {
		var g golden
		goldens.Load(t, name, &g)
		for _, c := range g.Cases {
			if c.Expected == nil {
				continue // a file Nauro refuses to parse is not one it writes
			}
			num := len(files) + 2
			// The H1 number follows the file name; rewrite it as Nauro's
			// renumbering would, keeping everything else as Nauro wrote it.
			text := c.Expected.FormattedReference
			i := strings.Index(text, "\n# ")
			j := strings.Index(text[i+3:], " \u2014 ")
			text = text[:i+3] + fmt.Sprintf("%03d", num) + text[i+3+j:]
			stem := fmt.Sprintf("%03d-%s", num, strings.ReplaceAll(c.ID, "_", "-"))
			if err := os.WriteFile(filepath.Join(dir, "decisions", stem+".md"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, written{num, text, c.Expected.Parsed.Rationale, c.Expected.Parsed.Status == "active"})
		}
	}
	if len(files) < 30 {
		t.Fatalf("only %d files from the goldens", len(files))
	}
	p := New()
	p.Now = func() time.Time { return testNow }
	p.Getenv = func(string) string { return "" }
	if err := p.Configure(context.Background(), &sdk.Config{ProjectDir: t.TempDir(), Settings: map[string]string{decisionsapi.SettingStore: dir, decisionsapi.SettingFrontmatter: "reference"}}); err != nil {
		t.Fatal(err)
	}

	list := call(t, p, decisionsapi.ToolListDecisions, `{"limit": 1000, "include_superseded": true}`)
	if !strings.Contains(list.Text, fmt.Sprintf("Decisions (%d total)", len(files))) || strings.Contains(list.Text, "could not be read") {
		t.Fatalf("list_decisions:\n%s", list.Text)
	}
	for _, f := range files {
		got := call(t, p, decisionsapi.ToolGetDecision, fmt.Sprintf(`{"number": %d}`, f.num))
		if got.Text != strings.TrimRight(f.text, " \n") {
			t.Errorf("get_decision %d:\n%s\nwant the file as Nauro wrote it", f.num, got.Text)
		}
		d, err := decision.Parse(f.text, fmt.Sprintf("%03d-x.md", f.num))
		if err != nil {
			t.Fatalf("decision %d: %v", f.num, err)
		}
		if out := decision.Format(d, decision.Reference); out != f.text {
			t.Errorf("decision %d re-formats differently:\n%s\nwant\n%s", f.num, out, f.text)
		}
	}
	check := call(t, p, decisionsapi.ToolCheckDecision, `{"proposed_approach": "One Makefile entry point per repository"}`)
	if strings.Contains(check.Text, "could not be read") {
		t.Errorf("check_decision:\n%s", check.Text)
	}

	// Update a decision whose rationale holds a fenced "## " line.
	var target *written
	for i, f := range files {
		if f.active && strings.Contains(f.rationale, "\n## ") {
			target = &files[i]
			break
		}
	}
	if target == nil {
		t.Fatal("no active decision with a fenced ## line in the goldens")
	}
	args, _ := json.Marshal(map[string]any{"title": "", "rationale": "A further note that is long enough.", "operation": "update",
		"affected_decision_id": fmt.Sprintf("decision-%03d", target.num)})
	res := call(t, p, decisionsapi.ToolProposeDecision, string(args))
	if res.IsError || !strings.Contains(res.Text, "confirmed") {
		t.Fatalf("update: %s", res.Text)
	}
	got := call(t, p, decisionsapi.ToolGetDecision, fmt.Sprintf(`{"number": %d}`, target.num))
	if !strings.Contains(got.Text, target.rationale) || !strings.Contains(got.Text, "A further note that is long enough.") {
		t.Errorf("after update the rationale is not whole:\n%s", got.Text)
	}
}
